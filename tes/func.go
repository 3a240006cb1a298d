package tes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Func is the TES acquisition α(B) of one BO iteration for batches of q
// points (Eq. (8) approximated as in §4.1/§4.2): a deterministic,
// differentiable function of the batch (fixed base points), safe for
// concurrent use. It implements acq.Func, acq.Differentiable,
// acq.Starter and acq.Stochastic.
//
// With pending points P (proposed earlier, not yet observed) it returns the
// conditional information gain I(x*; y_B | y_P) = α(P ∪ B) − α(P).
type Func struct {
	m       *Model
	q       int
	pending *mat.Dense
	np      int
	epBase  []basePoints // per mixture component (TES_ep)
	spBase  basePoints   // shared (TES_sp)
	alpha0  float64      // α(P)
	mu      sync.Mutex   // guards rng
	rng     *rand.Rand   // for Starts only
}

// Func returns α(B) for batches of q points, conditioning on pending
// (may be nil). Base points of y_B are drawn from rng once, here.
func (m *Model) Func(q int, pending *mat.Dense, rng *rand.Rand) (*Func, error) {
	if q < 1 {
		return nil, fmt.Errorf("tes: batch size %d must be positive", q)
	}
	_, d := m.XStar.Dims()
	f := &Func{m: m, q: q, rng: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))}
	if pending != nil {
		np, pd := pending.Dims()
		if np > 0 {
			if pd != d {
				return nil, fmt.Errorf("tes: pending points have %d columns, want %d", pd, d)
			}
			f.pending, f.np = pending, np
		}
	}
	qt := q + f.np
	f.epBase, f.spBase = m.basePoints(qt, rng)
	if f.np > 0 {
		eb, sb := m.basePoints(f.np, rng)
		a, _, err := m.info(pending, f.np, eb, sb, false)
		if err != nil {
			return nil, fmt.Errorf("tes: information gain of the pending points: %w", err)
		}
		f.alpha0 = a.Alpha
	}
	return f, nil
}

// shareBasePoints re-estimates α(P) with the pending points' rows of the
// batch's own Monte-Carlo base points (headAlpha), so that the
// conditional gain α(P ∪ B) − α(P) is a difference of two estimates on
// the same random numbers. With α(P) from its own base points the
// difference carries both errors (a few percent of α(P),
// Settings.BaseSamples), which is harmless where α(P) is a constant of
// the maximization but not where the gain is divided by a cost
// (multi-fidelity): an error of the sign that inflates every gain made
// the cheapest fidelity look best by the ratio of costs.
func (f *Func) shareBasePoints() error {
	if f.np == 0 {
		return nil
	}
	a, ok, err := f.headAlpha(nil)
	if err != nil {
		return fmt.Errorf("tes: information gain of the pending points: %w", err)
	}
	if ok {
		f.alpha0 = a
	}
	return nil
}

// headAlpha returns α(P ∪ X) for a batch X of fewer than q points (nil:
// α(P)) on the first |P| + |X| rows of f's own Monte-Carlo base points.
// y = m + L z with L lower triangular, so those rows draw y_{P ∪ X} as
// the full draws would: a difference α(P ∪ B) − α(P ∪ X) of estimates on
// one set of base points loses the error their common part shares. ok is
// false where f's values are quadratures (near exact; nothing to share).
func (f *Func) headAlpha(X *mat.Dense) (alpha float64, ok bool, err error) {
	qt := f.np
	if X != nil {
		r, _ := X.Dims()
		qt += r
	}
	head := func(b basePoints) basePoints {
		return basePoints{Z: b.Z[:qt*b.N], W: b.W, N: b.N, Pairs: b.Pairs}
	}
	var eb []basePoints
	var sb basePoints
	switch {
	case qt == 0 || qt >= f.q+f.np:
		return 0, false, fmt.Errorf("tes: head of %d rows of a batch of %d", qt, f.q+f.np)
	case f.m.ep != nil:
		if len(f.epBase) == 0 || f.epBase[0].Quad {
			return 0, false, nil
		}
		eb = make([]basePoints, len(f.epBase))
		for i, b := range f.epBase {
			eb[i] = head(b)
		}
	default:
		if f.spBase.Quad || f.spBase.N == 0 {
			return 0, false, nil
		}
		sb = head(f.spBase)
	}
	r, _, err := f.m.info(stackRows(f.pending, X), qt, eb, sb, false)
	if err != nil {
		return 0, false, err
	}
	return r.Alpha, true, nil
}

// basePoints returns fixed base points for a joint batch of qt points:
// Gauss–Hermite for small qt, antithetic Monte Carlo otherwise.
func (m *Model) basePoints(qt int, rng *rand.Rand) ([]basePoints, basePoints) {
	s := m.settings
	if m.ep != nil {
		out := make([]basePoints, len(m.ep.P))
		switch {
		case qt == 1:
			b := ghBase(1, s.GHNodes)
			for i := range out {
				out[i] = b
			}
		case qt == 2:
			b := ghBase(2, min(s.GHNodes, 10))
			for i := range out {
				out[i] = b
			}
		default:
			total := s.BaseSamples
			if total <= 0 {
				total = 512
				if qt > 10 {
					total = 256
				}
			}
			for i, p := range m.ep.P {
				n := int(math.Round(float64(total) * p))
				out[i] = mcBase(rng, qt, max(6, n))
			}
		}
		return out, basePoints{}
	}
	if qt == 1 {
		return nil, ghBase(1, s.GHNodes)
	}
	total := s.BaseSamples
	if total <= 0 {
		total = 32
	}
	return nil, mcBase(rng, qt, total)
}

// info evaluates the mixture information gain at the joint batch X.
func (m *Model) info(X *mat.Dense, qt int, eb []basePoints, sb basePoints, grad bool) (mixResult, *mat.Dense, error) {
	// With the gradient, PredictGrad keeps the prediction's intermediates
	// for the reverse pass (the same arithmetic as Predict + PredictVJP,
	// without computing the prediction twice).
	var A *mat.Dense
	var S *mat.SymDense
	var vjp func(*mat.Dense, []float64, *mat.Dense) *mat.Dense
	if grad {
		A, _, S, vjp = m.Cond.PredictGrad(X)
	} else {
		A, _, S = m.Cond.Predict(X)
	}
	a, _, k := denseData(A)
	sd, _ := symData(S)
	var r mixResult
	var err error
	if m.ep != nil {
		r, err = m.ep.gaussInfo(a, qt, sd, m.noise, eb, grad)
	} else {
		r, err = m.sp.info(a, qt, sd, m.noise, sb, grad)
	}
	if err != nil {
		return r, nil, err
	}
	if math.IsNaN(r.Alpha) || math.IsInf(r.Alpha, 0) {
		return r, nil, errNotFinite
	}
	if !grad {
		return r, nil, nil
	}
	gA := mat.NewDense(qt, k, r.GA)
	gS := mat.NewDense(qt, qt, r.GS)
	return r, vjp(gA, nil, gS), nil
}

func (f *Func) joint(X *mat.Dense) *mat.Dense {
	if f.np == 0 {
		return X
	}
	_, d := X.Dims()
	j := mat.NewDense(f.np+f.q, d, nil)
	j.Slice(0, f.np, 0, d).(*mat.Dense).Copy(f.pending)
	j.Slice(f.np, f.np+f.q, 0, d).(*mat.Dense).Copy(X)
	return j
}

// Eval returns α(X) for the batch X (q×d) and, if grad is non-nil, writes
// ∂α/∂X into it. A failed evaluation (a covariance that stays indefinite)
// is logged and rated −Inf.
func (f *Func) Eval(X, grad *mat.Dense) float64 {
	return f.evalWith(X, grad, f.epBase, f.spBase)
}

// evalWith is Eval with the given base points.
func (f *Func) evalWith(X, grad *mat.Dense, eb []basePoints, sb basePoints) float64 {
	r, g, err := f.m.info(f.joint(X), f.q+f.np, eb, sb, grad != nil)
	if err != nil {
		f.m.settings.Log.Debug().Err(err).Msg("tes: evaluation failed; rating the batch −Inf")
		if grad != nil {
			grad.Zero()
		}
		return math.Inf(-1)
	}
	if grad != nil {
		_, d := X.Dims()
		grad.Copy(g.Slice(f.np, f.np+f.q, 0, d))
		if !allFinite(grad.RawMatrix().Data) {
			f.m.settings.Log.Debug().Msg("tes: non-finite gradient; rating the batch −Inf")
			grad.Zero()
			return math.Inf(-1)
		}
	}
	return r.Alpha - f.alpha0
}

// EvalSample implements acq.Stochastic: α(X) (and ∂α/∂X into grad if
// non-nil) estimated with base points drawn afresh from rng — the paper's
// stochastic optimization with the reparameterization trick (§4.1). Where
// Gauss–Hermite quadrature is used (TES_ep with q ≤ 2 in total, TES_sp with
// q = 1) there is nothing to resample and it equals Eval.
func (f *Func) EvalSample(X, grad *mat.Dense, rng *rand.Rand) float64 {
	eb, sb := f.m.basePoints(f.q+f.np, rng)
	if (sb.Quad || sb.N == 0) && (len(eb) == 0 || eb[0].Quad) {
		return f.Eval(X, grad)
	}
	return f.evalWith(X, grad, eb, sb)
}

// Estimate returns α(X) and the standard error of its fixed-sample
// estimate (0 when Gauss–Hermite quadrature is used).
func (f *Func) Estimate(X *mat.Dense) (alpha, se float64, err error) {
	r, _, err := f.m.info(f.joint(X), f.q+f.np, f.epBase, f.spBase, false)
	if err != nil {
		return math.NaN(), math.NaN(), err
	}
	return r.Alpha - f.alpha0, r.SE, nil
}

// HasGradient reports that Eval fills grad (acq.Differentiable).
func (f *Func) HasGradient() bool { return true }

// Starts suggests starting batches built from X* (§4.3: TES chooses points
// in or around X*): for q = 1 each of the 6 (TES_sp: 3) most probable x*; for
// q > 1 the q most probable x* (all of X*, then perturbed copies, if
// q > |X*|) and two batches drawn ∝ p(x*) with perturbations of 5% of a
// length-scale.
func (f *Func) Starts(q int) []*mat.Dense {
	if q != f.q {
		return nil
	}
	xs := f.m.XStar
	k, d := xs.Dims()
	p := f.m.Probs.P
	order := f.order()
	if q == 1 {
		// TES_sp evaluations cost ~|F|² each: fewer starts.
		n := 6
		if f.m.sp != nil {
			n = 3
		}
		var out []*mat.Dense
		for _, i := range order[:min(n, k)] {
			out = append(out, mat.NewDense(1, d, append([]float64(nil), xs.RawRowView(i)...)))
		}
		return out
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	rng := f.rng
	perturb := func(dst []float64, src []float64, scale float64) {
		for c := range dst {
			dst[c] = clamp01(src[c] + scale*f.m.ell[c]*rng.NormFloat64())
		}
	}
	top := mat.NewDense(q, d, nil)
	for r := 0; r < q; r++ {
		src := xs.RawRowView(order[r%k])
		if r < k {
			copy(top.RawRowView(r), src)
		} else {
			perturb(top.RawRowView(r), src, 0.05)
		}
	}
	out := []*mat.Dense{top}
	cum := make([]float64, k)
	acc := 0.0
	for i := range p {
		acc += p[i]
		cum[i] = acc
	}
	for s := 0; s < 2; s++ {
		b := mat.NewDense(q, d, nil)
		for r := 0; r < q; r++ {
			u := rng.Float64() * acc
			i := sort.SearchFloat64s(cum, u)
			perturb(b.RawRowView(r), xs.RawRowView(min(i, k-1)), 0.05)
		}
		out = append(out, b)
	}
	return out
}

// order returns the indices of X* by decreasing p(x*|y_D).
func (f *Func) order() []int {
	p := f.m.Probs.P
	order := make([]int, len(p))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return p[order[a]] > p[order[b]] })
	return order
}
