package acq

import (
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// PosteriorMean is the GP posterior mean μ(x) as a Func of one point
// (q = 1) with its gradient ∇μ(x). Maximizing it gives the recommendation
// x̄ = argmax μ of the TES paper's §5. Start rows (unit cube, may be nil)
// are suggested to the optimizer as extra starting points (Starter): the
// best evaluated point, so that x̄ is never worse than it for want of a
// start in its basin.
type PosteriorMean struct {
	GP    *gp.GP
	Start *mat.Dense // k×d starting points, or nil
}

// Eval implements Func.
func (f PosteriorMean) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	if grad == nil {
		m, _ := f.GP.MeanVar(x)
		return m
	}
	m, _ := f.GP.MeanVarGrad(x, grad.RawRowView(0), nil)
	return m
}

// HasGradient implements Differentiable.
func (PosteriorMean) HasGradient() bool { return true }

// Starts implements Starter: the rows of Start, one start each (none when
// q ≠ 1).
func (f PosteriorMean) Starts(q int) []*mat.Dense {
	if q != 1 || f.Start == nil {
		return nil
	}
	r, d := f.Start.Dims()
	out := make([]*mat.Dense, r)
	for i := range r {
		out[i] = mat.NewDense(1, d, f.Start.RawRowView(i))
	}
	return out
}
