package pareto

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// gridHV counts the unit cells of {0..g−1}^m (reference point 0) that some
// point of pts (integer coordinates) dominates: the exact hypervolume.
func gridHV(pts [][]float64, m, g int) float64 {
	c := make([]int, m)
	count := 0
	for {
		for _, p := range pts {
			ok := true
			for j := range c {
				if p[j] < float64(c[j]+1) {
					ok = false
					break
				}
			}
			if ok {
				count++
				break
			}
		}
		j := 0
		for ; j < m; j++ {
			c[j]++
			if c[j] < g {
				break
			}
			c[j] = 0
		}
		if j == m {
			return float64(count)
		}
	}
}

// TestHypervolumeGrid compares Hypervolume with exact cell counting on
// random integer point sets, with ties, duplicates and dominated points.
func TestHypervolumeGrid(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{1, 2, 3, 4, 5} {
		g := 7
		for rep := 0; rep < 40; rep++ {
			n := 1 + rng.IntN(12)
			pts := make([][]float64, n)
			for i := range pts {
				pts[i] = make([]float64, m)
				for j := range pts[i] {
					pts[i][j] = float64(rng.IntN(g + 1))
				}
			}
			if n > 2 {
				pts[n-1] = append([]float64(nil), pts[0]...) // a duplicate
			}
			want := gridHV(pts, m, g)
			got := Hypervolume(pts, make([]float64, m))
			if math.Abs(got-want) > 1e-9 {
				t.Fatalf("m=%d rep=%d: Hypervolume = %v, cell count %v, points %v", m, rep, got, want, pts)
			}
		}
	}
}

// TestHypervolumeMonteCarlo checks continuous random fronts (2–6
// objectives, points on a sphere so most are non-dominated) against a
// Monte Carlo estimate within 4 standard errors.
func TestHypervolumeMonteCarlo(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{2, 3, 4, 5, 6} {
		pts := sphereFront(rng, 30, m)
		ref := make([]float64, m)
		got := Hypervolume(pts, ref)
		const N = 200000
		hits := 0
		u := make([]float64, m)
		for k := 0; k < N; k++ {
			for j := range u {
				u[j] = rng.Float64()
			}
			for _, p := range pts {
				if !Dominates(u, p) && allGE(p, u) {
					hits++
					break
				}
			}
		}
		est := float64(hits) / N
		se := math.Sqrt(est * (1 - est) / N)
		if math.Abs(got-est) > 4*se {
			t.Errorf("m=%d: Hypervolume = %v, Monte Carlo %v ± %v", m, got, est, se)
		}
	}
}

func allGE(a, b []float64) bool {
	for j := range a {
		if a[j] < b[j] {
			return false
		}
	}
	return true
}

// TestHypervolumeKnown checks hand-computed values.
func TestHypervolumeKnown(t *testing.T) {
	cases := []struct {
		pts  [][]float64
		ref  []float64
		want float64
	}{
		{[][]float64{{2, 3}}, []float64{0, 0}, 6},
		{[][]float64{{1, 3}, {3, 1}}, []float64{0, 0}, 5},
		{[][]float64{{1, 3}, {3, 1}, {1, 1}, {3, 1}}, []float64{0, 0}, 5},
		{[][]float64{{1, 3}, {3, 1}}, []float64{2, 0}, 1},                     // {1,3} is not above ref
		{[][]float64{{1, 1, 1}}, []float64{-1, 0, 0}, 2},                      // box 2×1×1
		{[][]float64{{2, 1, 1}, {1, 2, 1}, {1, 1, 2}}, []float64{0, 0, 0}, 4}, // 1 + 3 unit cubes
		{nil, []float64{0, 0}, 0},
		{[][]float64{{1, 2, 3, 4}}, []float64{0, 0, 0, 0}, 24},
	}
	for i, c := range cases {
		if got := Hypervolume(c.pts, c.ref); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("case %d: Hypervolume = %v, want %v", i, got, c.want)
		}
	}
	if got := HypervolumeImprovement([][]float64{{1, 3}}, [][]float64{{3, 1}}, []float64{0, 0}); got != 2 {
		t.Errorf("HypervolumeImprovement = %v, want 2", got)
	}
	if got := HypervolumeImprovement([][]float64{{1, 3}}, [][]float64{{0.5, 2}}, []float64{0, 0}); got != 0 {
		t.Errorf("HypervolumeImprovement of a dominated point = %v, want 0", got)
	}
}

// TestFront checks dominance, ties and duplicates, against a brute-force
// definition on random integer data.
func TestFront(t *testing.T) {
	Y := [][]float64{{1, 2}, {2, 1}, {1, 2}, {0, 0}, {2, 1}, {1, 1}, {math.NaN(), 9}, {2, 2}}
	if got := Front(Y); !reflect.DeepEqual(got, []int{7}) {
		t.Errorf("Front = %v, want [7]", got)
	}
	Y = Y[:6]
	if got := Front(Y); !reflect.DeepEqual(got, []int{0, 1}) {
		t.Errorf("Front = %v, want [0 1] (first of each duplicate)", got)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for rep := 0; rep < 50; rep++ {
		n, m := 1+rng.IntN(15), 1+rng.IntN(4)
		Y := make([][]float64, n)
		for i := range Y {
			Y[i] = make([]float64, m)
			for j := range Y[i] {
				Y[i][j] = float64(rng.IntN(4))
			}
		}
		var want []int
		for i := range Y {
			ok := true
			for k := range Y {
				if Dominates(Y[k], Y[i]) || (k < i && reflect.DeepEqual(Y[k], Y[i])) {
					ok = false
				}
			}
			if ok {
				want = append(want, i)
			}
		}
		if got := Front(Y); !reflect.DeepEqual(got, want) {
			t.Fatalf("Front(%v) = %v, want %v", Y, got, want)
		}
	}
}

// TestRefPoint checks the rule nadir − 0.1·range and its degenerate cases.
func TestRefPoint(t *testing.T) {
	Y := [][]float64{{0, 10}, {10, 0}, {-5, -5}, {5, 5}}
	if got, want := RefPoint(Y), []float64{-1, -1}; !reflect.DeepEqual(got, want) {
		t.Errorf("RefPoint = %v, want %v", got, want)
	}
	if got, want := RefPoint([][]float64{{2, -4}}), []float64{1.8, -4.4}; math.Abs(got[0]-want[0]) > 1e-12 || math.Abs(got[1]-want[1]) > 1e-12 {
		t.Errorf("RefPoint of one point = %v, want %v", got, want)
	}
	if got := RefPoint([][]float64{{0, 1}}); got[0] != -1e-8 {
		t.Errorf("RefPoint at a zero nadir = %v, want first coordinate −1e-8", got)
	}
	if got := RefPoint(nil); got != nil {
		t.Errorf("RefPoint(nil) = %v, want nil", got)
	}
}

// Ranks against a chain (each row dominates the next), an antichain (one
// rank), identical rows (one rank) and a row holding a NaN (last).
func TestRanks(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		Y    [][]float64
		want []int
	}{
		{[][]float64{{1, 1}, {3, 3}, {2, 2}, {0, 0}}, []int{2, 0, 1, 3}},
		{[][]float64{{0, 3}, {1, 2}, {2, 1}, {3, 0}}, []int{0, 0, 0, 0}},
		{[][]float64{{2, 2}, {1, 1}, {2, 2}}, []int{0, 1, 0}},
		{[][]float64{{nan, 5}, {1, 1}}, []int{1, 0}},
	} {
		if got := Ranks(c.Y); !slices.Equal(got, c.want) {
			t.Errorf("Ranks(%v) = %v, want %v", c.Y, got, c.want)
		}
	}
}
