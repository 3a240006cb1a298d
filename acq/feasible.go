package acq

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Feasible is the probability that an evaluation at a point of [0,1]^d
// succeeds, learnt from earlier failures (the host fits a GP classifier,
// package gp/classify). It works in log space so that regions where p
// underflows are still ranked.
type Feasible interface {
	// LogProb returns log p(success | x); if grad is non-nil (len d) it
	// writes ∇ log p into it. It must be safe for concurrent use.
	LogProb(x, grad []float64) float64
}

// FeasibleFloor is the success probability below which a point is
// penalized steeply on top of the weighting by p (see FeasibilityWeighted).
const FeasibleFloor = 0.05

// floorPower is the steepness of the penalty below FeasibleFloor: the
// weight of a point with p < FeasibleFloor is p·(p/FeasibleFloor)^floorPower,
// so at half the floor it is another 2^-10 ≈ 0.001 smaller.
const floorPower = 10

// logWeight is log w(p) = log p + floorPower·min(0, log p − log floor): the
// weight of one batch point, and its derivative d log w / d log p.
func logWeight(lp float64) (float64, float64) {
	if d := lp - math.Log(FeasibleFloor); d < 0 {
		return lp + floorPower*d, 1 + floorPower
	}
	return lp, 1
}

// logScaled is implemented by Funcs whose value is a logarithm (log EI,
// log PI, LP-EI) or has no fixed sign (UCB): for them the success
// probability enters as an additive log penalty instead of a factor.
type logScaled interface {
	logScale() bool
}

// FeasibilityWeighted returns f weighted by the probability that every point
// of the batch succeeds, W(B) = Π_i w(p(x_i)), with w(p) = p above
// FeasibleFloor and p·(p/FeasibleFloor)^10 below it. It returns f itself
// when s.Feasible is nil (no failure observed), so a study without failures
// is unchanged. Every acquisition maximized over batches goes through it
// (Optimized, Greedy, localPenalization and package tes).
//
// How W enters depends on the scale of α:
//
//   - α ≥ 0 (EI-type expectations, TES's α, MES, PES, qEI): α(B)·W(B), the
//     acquisition times the probability that the whole batch succeeds under
//     independent failures — a failed point contributes nothing, and the
//     product is the simple conservative choice for joint batch values.
//   - log-scale or signed α (log EI, log PI, LP-EI, UCB; the Funcs that
//     say so): α(B) + log W(B). For log α this is exactly log(α·W); for UCB,
//     in standardized units, log w is a penalty of about one posterior
//     standard deviation per halving of p.
//   - any other Func that returns a negative value: α(B)/W(B), which keeps
//     the order of α at fixed W and still penalizes failure-prone batches
//     (α·W would reward them).
//
// Thompson sampling ("ts") and random search do not use it: a TS batch
// member is the maximizer of a posterior sample, whose value has no fixed
// sign or scale to weight, and random search is the unguided baseline. (The
// host still replaces any proposed point, theirs included, whose success
// probability is below FeasibleFloor.)
//
// The result implements the optional interfaces f implements that the
// optimizer uses (Differentiable, Stochastic, Starter).
func FeasibilityWeighted(f Func, s *State) Func {
	if s == nil || s.Feasible == nil || f == nil {
		return f
	}
	w := &weighted{f: f, feas: s.Feasible}
	if ls, ok := f.(logScaled); ok {
		w.log = ls.logScale()
	}
	if df, ok := f.(Differentiable); ok {
		w.grad = df.HasGradient()
	}
	if sf, ok := f.(Stochastic); ok {
		return &weightedStochastic{weighted: w, s: sf}
	}
	return w
}

// weighted is FeasibilityWeighted's Func.
type weighted struct {
	f    Func
	feas Feasible
	log  bool // additive log penalty (see logScaled)
	grad bool // f has an analytic gradient
}

func (w *weighted) HasGradient() bool { return w.grad }

// Starts forwards the inner Func's suggested starts.
func (w *weighted) Starts(q int) []*mat.Dense {
	if st, ok := w.f.(Starter); ok {
		return st.Starts(q)
	}
	return nil
}

// evalRows scores single points row by row, through the inner Func's
// batched scoring when it has one.
func (w *weighted) evalRows(X *mat.Dense, out []float64) {
	_, d := X.Dims()
	row := func(i int) *mat.Dense { return X.Slice(i, i+1, 0, d).(*mat.Dense) }
	if bs, ok := w.f.(batchScorer); ok {
		bs.evalRows(X, out)
	} else {
		for i := range out {
			out[i] = w.f.Eval(row(i), nil)
		}
	}
	for i := range out {
		out[i] = w.combine(out[i], w.logW(row(i), nil), nil, nil, nil)
	}
}

func (w *weighted) Eval(X, grad *mat.Dense) float64 {
	return w.eval(X, grad, func(G *mat.Dense) float64 { return w.f.Eval(X, G) })
}

// eval combines α = inner(∇α destination) with the batch weight.
func (w *weighted) eval(X, grad *mat.Dense, inner func(*mat.Dense) float64) float64 {
	if grad == nil || !w.grad {
		return w.combine(inner(nil), w.logW(X, nil), nil, nil, nil)
	}
	q, d := X.Dims()
	ga, gw := mat.NewDense(q, d, nil), mat.NewDense(q, d, nil)
	a := inner(ga)
	return w.combine(a, w.logW(X, gw), ga, gw, grad)
}

// combine returns the weighted value of α = a given log W = lw (see
// FeasibilityWeighted); with grad non-nil it writes the gradient from
// ga = ∇α and gw = ∇log W into it.
func (w *weighted) combine(a, lw float64, ga, gw, grad *mat.Dense) float64 {
	if math.IsNaN(a) || math.IsInf(a, 0) {
		return a
	}
	var v, ca, cw float64 // v and its gradient ca·∇α + cw·∇log W
	switch {
	case w.log:
		v, ca, cw = a+lw, 1, 1
	case a >= 0:
		W := math.Exp(lw)
		v, ca, cw = a*W, W, a*W
	default:
		iW := math.Exp(-lw)
		v, ca, cw = a*iW, iW, -a*iW
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return math.Inf(-1)
	}
	if grad != nil {
		r, c := grad.Dims()
		for i := 0; i < r; i++ {
			for j := 0; j < c; j++ {
				grad.Set(i, j, ca*ga.At(i, j)+cw*gw.At(i, j))
			}
		}
	}
	return v
}

// logW returns log W(B) = Σ_i log w(p(x_i)) and writes ∇log W into grad
// when non-nil.
func (w *weighted) logW(X, grad *mat.Dense) float64 {
	q, _ := X.Dims()
	var sum float64
	for i := 0; i < q; i++ {
		var g []float64
		if grad != nil {
			g = grad.RawRowView(i)
		}
		lw, dw := logWeight(w.feas.LogProb(X.RawRowView(i), g))
		for j := range g {
			g[j] *= dw
		}
		sum += lw
	}
	return sum
}

// weightedStochastic is a weighted Stochastic Func: its Monte-Carlo
// estimates are weighted like Eval (W is deterministic).
type weightedStochastic struct {
	*weighted
	s Stochastic
}

func (w *weightedStochastic) EvalSample(X, grad *mat.Dense, rng *rand.Rand) float64 {
	return w.eval(X, grad, func(G *mat.Dense) float64 { return w.s.EvalSample(X, G, rng) })
}
