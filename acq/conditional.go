package acq

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Conditional spaces (a parameter active only for some choices of a
// categorical parent; sdk.Condition). The host maps an inactive parameter
// to a fixed default coordinate of the unit cube, so a point is fully
// described by its active coordinates (State.Canonical). The inner
// optimizer evaluates the acquisition only at such canonical points: it
// wraps the Func so that every batch is made canonical before it is
// scored and the gradient along inactive coordinates is zero (they do not
// change the point), and returns a canonical batch. Without this the
// optimizer would score points whose inactive coordinates differ from the
// default, which the GP — and the objective — never see.

// canonicalFunc is MaximizeMixed's Func on a conditional space.
type canonicalFunc struct {
	f     Func
	canon func(x []float64) []bool
	grad  bool
}

// canonicalize wraps f for the canonical map canon (nil: f itself).
func canonicalize(f Func, canon func([]float64) []bool) Func {
	if canon == nil {
		return f
	}
	c := &canonicalFunc{f: f, canon: canon}
	if df, ok := f.(Differentiable); ok {
		c.grad = df.HasGradient()
	}
	if sf, ok := f.(Stochastic); ok {
		return &canonicalStochastic{canonicalFunc: c, s: sf}
	}
	return c
}

// rows returns a canonical copy of X and, per row, its inactive mask.
func (c *canonicalFunc) rows(X *mat.Dense) (*mat.Dense, [][]bool) {
	Y := mat.DenseCopyOf(X)
	r, _ := Y.Dims()
	masks := make([][]bool, r)
	for i := range r {
		masks[i] = c.canon(Y.RawRowView(i))
	}
	return Y, masks
}

// zero clears grad along the inactive coordinates.
func zero(grad *mat.Dense, masks [][]bool) {
	if grad == nil {
		return
	}
	for i, m := range masks {
		for j, off := range m {
			if off {
				grad.Set(i, j, 0)
			}
		}
	}
}

// Eval implements Func.
func (c *canonicalFunc) Eval(X, grad *mat.Dense) float64 {
	Y, masks := c.rows(X)
	v := c.f.Eval(Y, grad)
	zero(grad, masks)
	return v
}

// HasGradient implements Differentiable.
func (c *canonicalFunc) HasGradient() bool { return c.grad }

// Starts forwards the inner Func's suggested starts.
func (c *canonicalFunc) Starts(q int) []*mat.Dense {
	if st, ok := c.f.(Starter); ok {
		return st.Starts(q)
	}
	return nil
}

// evalRows scores canonical copies of the rows, through the inner Func's
// batched scoring when it has one.
func (c *canonicalFunc) evalRows(X *mat.Dense, out []float64) {
	Y, _ := c.rows(X)
	if bs, ok := c.f.(batchScorer); ok {
		bs.evalRows(Y, out)
		return
	}
	_, d := Y.Dims()
	for i := range out {
		out[i] = c.f.Eval(Y.Slice(i, i+1, 0, d).(*mat.Dense), nil)
	}
}

// canonicalStochastic is canonicalFunc of a Stochastic Func.
type canonicalStochastic struct {
	*canonicalFunc
	s Stochastic
}

// EvalSample implements Stochastic.
func (c *canonicalStochastic) EvalSample(X, grad *mat.Dense, rng *rand.Rand) float64 {
	Y, masks := c.rows(X)
	v := c.s.EvalSample(Y, grad, rng)
	zero(grad, masks)
	return v
}
