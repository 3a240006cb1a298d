package acq

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// cancelling is a Func whose first evaluation points uphill and whose
// later ones fail every line-search step (−Inf), cancelling the context
// at the second: the search must stop at once, not halve its step the 39
// more times an uncancelled search would.
type cancelling struct {
	cancel func()
	calls  int
}

func (c *cancelling) Eval(X, grad *mat.Dense) float64 {
	c.calls++
	if grad != nil {
		grad.Set(0, 0, 1)
	}
	if c.calls == 1 {
		return 0
	}
	if c.calls == 2 {
		c.cancel()
	}
	return math.Inf(-1)
}

func (c *cancelling) HasGradient() bool { return true }

func TestLineSearchStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &cancelling{cancel: cancel}
	x := []float64{0.2}
	projectedLBFGS(ctx, newProblem(f, 1, 1, 1e-6), x, OptimizeSettings{MaxIter: 10, Memory: 5}.withDefaults())
	if f.calls != 2 {
		t.Fatalf("%d evaluations, want 2: none after the cancellation", f.calls)
	}
}
