package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// With pinned coordinates MaximizeMixed returns them exactly and maximizes
// over the free ones: on α(x) = −Σ_j (x_j − c_j)² + a coupling term, the
// free coordinates reach the maximizer of the slice, not of the cube, and
// a pinned categorical keeps its bin while the free one is searched.
func TestMaximizePinned(t *testing.T) {
	c := []float64{0.3, 0.7, 0.5, 0.2}
	// α couples x0 and x1: on the slice x0 = 0.9 the best x1 is 0.7 + 0.5·0.6 = 1 (clipped).
	f := funcOf(func(X, g *mat.Dense) float64 {
		v := 0.0
		q, _ := X.Dims()
		for r := range q {
			x := X.RawRowView(r)
			for j := range c {
				v -= (x[j] - c[j]) * (x[j] - c[j])
			}
			v += (x[0] - c[0]) * (x[1] - c[1])
			if g != nil {
				for j := range c {
					g.Set(r, j, -2*(x[j]-c[j]))
				}
				g.Set(r, 0, g.At(r, 0)+(x[1]-c[1]))
				g.Set(r, 1, g.At(r, 1)+(x[0]-c[0]))
			}
		}
		return v
	})
	nan := math.NaN()
	pin := []float64{0.9, nan, 1.0 / 6, nan} // coordinate 2 categorical (3 choices): bin 0's centre
	cats := []int{0, 0, 3, 0}
	for _, q := range []int{1, 2} {
		X, _, err := MaximizeMixed(context.Background(), f, q, 4, cats, OptimizeSettings{Pinned: pin, Workers: 1}, rand.New(rand.NewPCG(3, 3)))
		if err != nil {
			t.Fatal(err)
		}
		for r := range q {
			x := X.RawRowView(r)
			if x[0] != 0.9 || x[2] != 1.0/6 {
				t.Fatalf("q=%d row %d: pinned coordinates %v, %v, want 0.9, 1/6", q, r, x[0], x[2])
			}
			// ∂α/∂x1 = −2(x1 − 0.7) + 0.6 = 0 at x1 = 1.0; ∂α/∂x3 = 0 at 0.2.
			if math.Abs(x[1]-1) > 1e-4 || math.Abs(x[3]-0.2) > 1e-4 {
				t.Fatalf("q=%d row %d: free coordinates %v, %v, want 1, 0.2", q, r, x[1], x[3])
			}
		}
	}
	if _, _, err := MaximizeMixed(context.Background(), f, 1, 4, nil, OptimizeSettings{Pinned: pin[:2]}, rand.New(rand.NewPCG(3, 3))); err == nil {
		t.Fatal("pins of the wrong length accepted")
	}
}

// On a conditional space MaximizeMixed scores canonical points only: here
// x1 is inactive (fixed at 0.1) when x0 < 0.5, so the best canonical point
// is (0.5, 0.9) with α = −0.09, not (0.2, 0.9), which is not a point of the
// space (canonically (0.2, 0.1), α = −0.64).
func TestMaximizeCanonical(t *testing.T) {
	canon := func(x []float64) []bool {
		if x[0] < 0.5 {
			x[1] = 0.1
			return []bool{false, true}
		}
		return nil
	}
	f := funcOf(func(X, g *mat.Dense) float64 {
		x := X.RawRowView(0)
		if g != nil {
			g.Set(0, 0, -2*(x[0]-0.2))
			g.Set(0, 1, -2*(x[1]-0.9))
		}
		return -(x[0]-0.2)*(x[0]-0.2) - (x[1]-0.9)*(x[1]-0.9)
	})
	X, v, err := MaximizeMixed(context.Background(), f, 1, 2, nil, OptimizeSettings{Canonical: canon, Workers: 1}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	x := X.RawRowView(0)
	if x[0] < 0.5 || x[0] > 0.51 || math.Abs(x[1]-0.9) > 0.01 || math.Abs(v+0.09) > 1e-3 { // the step at x0 = 0.5 stops L-BFGS short
		t.Fatalf("got %v (α %v), want (0.5, 0.9), α −0.09", x, v)
	}
}
