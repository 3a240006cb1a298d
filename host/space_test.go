package host

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

func TestSpaceTransform(t *testing.T) {
	sp, err := NewSpace([]sdk.Param{
		{Name: "f", Kind: sdk.Float, Low: -5, High: 10},
		{Name: "l", Kind: sdk.LogFloat, Low: 1e-5, High: 1e-1},
		{Name: "i", Kind: sdk.Int, Low: 2.5, High: 6}, // integers 3..6
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ u, x []float64 }{
		{[]float64{0, 0, 0}, []float64{-5, 1e-5, 3}},
		{[]float64{1, 1, 1}, []float64{10, 1e-1, 6}},
		{[]float64{0.5, 0.5, 0.5}, []float64{2.5, 1e-3, 5}},
		{[]float64{0.2, 0.25, 0.2499}, []float64{-2, 1e-4, 3}},
		{[]float64{-3, 7, math.NaN()}, []float64{-5, 1e-1, 3}}, // clamped
	}
	for _, c := range cases {
		x := sp.ToNative(c.u)
		for j := range x {
			if math.Abs(x[j]-c.x[j]) > 1e-12*math.Max(1, math.Abs(c.x[j])) {
				t.Errorf("ToNative(%v) = %v, want %v", c.u, x, c.x)
				break
			}
		}
	}
	// Round trip: ToUnit(ToNative(u)) = Snap(u) (exactly on Int coordinates).
	rng := rand.New(rand.NewPCG(1, 1))
	counts := make([]int, 4)
	for range 4000 {
		u := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		x := sp.ToNative(u)
		back, err := sp.ToUnit(x)
		if err != nil {
			t.Fatal(err)
		}
		sn := sp.Snap(u)
		for j := range u {
			if math.Abs(back[j]-sn[j]) > 1e-12 {
				t.Fatalf("round trip %v → %v → %v, snap %v", u, x, back, sn)
			}
		}
		if sn[2] != back[2] || x[2] != math.Round(x[2]) {
			t.Fatalf("Int coordinate: x %v back %v snap %v", x[2], back[2], sn[2])
		}
		counts[int(x[2])-3]++
	}
	// Each integer owns a quarter of the cube: counts ~ Binomial(4000, 1/4),
	// sd ≈ 27; allow 5 sd.
	for k, c := range counts {
		if math.Abs(float64(c)-1000) > 5*math.Sqrt(4000*0.25*0.75) {
			t.Errorf("integer %d drawn %d times of 4000, want ≈1000", k+3, c)
		}
	}
	// LogFloat is uniform in log: the median of log10 x is −3.
	below := 0
	for range 4000 {
		if sp.ToNative([]float64{0, rng.Float64(), 0})[1] < 1e-3 {
			below++
		}
	}
	if math.Abs(float64(below)-2000) > 5*math.Sqrt(1000) {
		t.Errorf("LogFloat: %d of 4000 below the log-midpoint, want ≈2000", below)
	}
	for _, bad := range [][]float64{{0, 1e-3}, {11, 1e-3, 3}, {0, 1e-3, 3.5}, {0, 0, 3}, {math.NaN(), 1e-3, 3}} {
		if _, err := sp.ToUnit(bad); err == nil {
			t.Errorf("ToUnit(%v) accepted", bad)
		}
	}
	if n, finite := sp.Cardinality(); finite || !math.IsInf(n, 1) {
		t.Errorf("mixed space cardinality %v %v", n, finite)
	}
	ints, _ := NewSpace([]sdk.Param{{Name: "a", Kind: sdk.Int, Low: 0, High: 2}, {Name: "b", Kind: sdk.Int, Low: -1, High: 1}})
	if n, finite := ints.Cardinality(); !finite || n != 9 {
		t.Errorf("3×3 integer space cardinality %v %v", n, finite)
	}
	if _, err := NewSpace([]sdk.Param{{Name: "a", Kind: sdk.Float, Low: 1, High: 1}}); err == nil {
		t.Error("Low == High accepted")
	}
}

func TestLatinHypercube(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	n, d := 7, 3
	X := latinHypercube(n, d, rng)
	for j := range d {
		seen := make([]bool, n)
		for i := range n {
			v := X.At(i, j)
			if v < 0 || v >= 1 {
				t.Fatalf("coordinate %v outside [0,1)", v)
			}
			k := int(v * float64(n))
			if seen[k] {
				t.Fatalf("dimension %d: two points in slice %d", j, k)
			}
			seen[k] = true
		}
	}
	// Same stream → same design.
	Y := latinHypercube(n, d, rand.New(rand.NewPCG(3, 4)))
	for i := range n {
		for j := range d {
			if X.At(i, j) != Y.At(i, j) {
				t.Fatal("design is not a function of the stream")
			}
		}
	}
}

func TestStreamsDistinct(t *testing.T) {
	seen := map[uint64]string{}
	for _, seed := range []uint64{0, 1, 2} {
		for it := 0; it < 50; it++ {
			for s := streamDesign; s <= streamRecommend; s++ {
				v := streamRand(seed, it, s).Uint64()
				if prev, dup := seen[v]; dup {
					t.Fatalf("streams collide: %s and (%d,%d,%d)", prev, seed, it, s)
				}
				seen[v] = "x"
			}
		}
	}
}
