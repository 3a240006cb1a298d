package classify

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

// labelled returns n random points of [0,1]^d labelled by fails.
func labelled(n, d int, seed uint64, fails func(x []float64) bool) (*mat.Dense, []bool) {
	rng := rand.New(rand.NewPCG(seed, 1))
	X := mat.NewDense(n, d, nil)
	ok := make([]bool, n)
	for i := 0; i < n; i++ {
		for j := 0; j < d; j++ {
			X.Set(i, j, rng.Float64())
		}
		ok[i] = !fails(X.RawRowView(i))
	}
	return X, ok
}

// The 1-D failure pattern of issue 14: errors below 0.3, timeouts above 0.8.
func fails1D(x []float64) bool { return x[0] < 0.3 || x[0] > 0.8 }

func TestRecoversFailingRegion1D(t *testing.T) {
	X, ok := labelled(30, 1, 1, fails1D)
	c, err := Fit(X, ok)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{0.02, 0.1, 0.2, 0.9, 0.97} {
		if p := c.prob([]float64{x}, nil); p > 0.05 {
			t.Errorf("p(success | %v) = %.3f in the failing region, want ≤ 0.05 (the floor)", x, p)
		}
	}
	for _, x := range []float64{0.4, 0.5, 0.6, 0.7} {
		if p := c.prob([]float64{x}, nil); p < 0.85 {
			t.Errorf("p(success | %v) = %.3f in the succeeding region, want ≥ 0.85", x, p)
		}
	}
}

// In 2-D the failures depend on x_1 only; the classifier must classify
// held-out points and ARD must lengthen the irrelevant dimension's scale.
func TestRecoversFailingRegion2D(t *testing.T) {
	fails := func(x []float64) bool { return x[0] > 0.6 }
	X, ok := labelled(60, 2, 2, fails)
	c, err := Fit(X, ok)
	if err != nil {
		t.Fatal(err)
	}
	Xt, okt := labelled(200, 2, 3, fails)
	wrong := 0
	for i := 0; i < 200; i++ {
		x := Xt.RawRowView(i)
		if math.Abs(x[0]-0.6) < 0.05 {
			continue // the boundary itself is uncertain
		}
		if (c.prob(x, nil) > 0.5) != okt[i] {
			wrong++
		}
	}
	if wrong > 6 {
		t.Errorf("%d of 200 held-out points misclassified, want ≤ 6", wrong)
	}
	ls, _ := c.params()
	if !(ls[1] > ls[0]) {
		t.Errorf("length-scales %v: want the irrelevant x_2 longer than x_1", ls)
	}
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	X, ok := labelled(25, 3, 4, func(x []float64) bool { return x[0]+x[1] > 1.1 || x[2] < 0.15 })
	c, err := Fit(X, ok)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	const h = 1e-6
	for trial := 0; trial < 20; trial++ {
		x := []float64{rng.Float64(), rng.Float64(), rng.Float64()}
		dmu, dvar, dlp, dp := make([]float64, 3), make([]float64, 3), make([]float64, 3), make([]float64, 3)
		c.latent(x, dmu, dvar)
		c.LogProb(x, dlp)
		c.prob(x, dp)
		for i := range x {
			xp := append([]float64(nil), x...)
			xm := append([]float64(nil), x...)
			xp[i] += h
			xm[i] -= h
			mp, vp := c.latent(xp, nil, nil)
			mm, vm := c.latent(xm, nil, nil)
			check := func(name string, got, want float64) {
				t.Helper()
				if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
					t.Errorf("x=%v ∂%s/∂x_%d = %.8g, finite difference %.8g", x, name, i, got, want)
				}
			}
			check("μ", dmu[i], (mp-mm)/(2*h))
			check("σ²", dvar[i], (vp-vm)/(2*h))
			check("log p", dlp[i], (c.LogProb(xp, nil)-c.LogProb(xm, nil))/(2*h))
			check("p", dp[i], (c.prob(xp, nil)-c.prob(xm, nil))/(2*h))
		}
	}
}

// Far from every labelled point the classifier knows nothing: p → ½.
func TestUnexploredIsHalf(t *testing.T) {
	X := mat.NewDense(4, 2, []float64{0, 0, 0.05, 0, 0, 0.05, 0.05, 0.05})
	c, err := Fit(X, []bool{false, false, true, false})
	if err != nil {
		t.Fatal(err)
	}
	if p := c.prob([]float64{1, 1}, nil); math.Abs(p-0.5) > 0.02 {
		t.Errorf("p at an unexplored corner = %.3f, want ≈ 0.5", p)
	}
}

func TestLogProbFarTail(t *testing.T) {
	for _, z := range []float64{-5, -19.9, -20.1, -40, -1e3} {
		got := linalg.LogPhi(z)
		if math.IsInf(got, 0) || math.IsNaN(got) {
			t.Fatalf("linalg.LogPhi(%v) = %v", z, got)
		}
		if z > -30 {
			want := math.Log(0.5 * math.Erfc(-z/math.Sqrt2))
			if math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("linalg.LogPhi(%v) = %v, want %v", z, got, want)
			}
		}
	}
}

func TestFitRejectsBadInput(t *testing.T) {
	if _, err := Fit(nil, nil); !errors.Is(err, errBadInput) {
		t.Errorf("nil inputs: err = %v", err)
	}
	if _, err := Fit(mat.NewDense(2, 1, []float64{0, 1}), []bool{true}); !errors.Is(err, errBadInput) {
		t.Errorf("label count mismatch: err = %v", err)
	}
	if _, err := Fit(mat.NewDense(1, 1, []float64{math.NaN()}), []bool{true}); !errors.Is(err, errBadInput) {
		t.Errorf("NaN input: err = %v", err)
	}
}
