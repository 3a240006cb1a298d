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
