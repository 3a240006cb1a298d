package gp

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Fitting at large n. One likelihood-and-gradient evaluation costs a
// Cholesky factorization and an explicit inverse, about n³ flops, and a
// fit takes 7–25 of them per start. From largeFitMin observations on, Fit
// therefore
//
//  1. runs all of its starts (warm start and random restarts alike) on a
//     subset of defaultFitSubset observations drawn without replacement
//     by a fixed-seed generator (a function of n alone, so a resumed
//     study re-derives the same subset and the same trials), where an
//     evaluation costs about (m/n)³ of a full one, and
//  2. polishes on all observations (polish): quasi-Newton steps from the
//     better of the subset optimum and the warm start, whose first
//     Hessian is the subset objective's, until the predicted gain is
//     below polishTol or after polishEvaluations evaluations on all data.
//
// The polish is what makes the result the full data's MAP estimate rather
// than the subset's (TestLargeFitNearFullFit), at a small fraction of the
// full fit's cost, also in a BO run's steady state (warm start from the
// fit on the first n − 20 points). The measurements are in
// docs/results/README.md, "Measurements behind the code".

// largeFitMin is the number of observations from which Fit fits on a
// subset and polishes on all data (see FitSettings.Subset).
const largeFitMin = 1024

// defaultFitSubset is the subset size Fit uses from largeFitMin
// observations on unless FitSettings.Subset says otherwise.
const defaultFitSubset = 512

// polishEvaluations bounds the full-data evaluations (with the gradient)
// of the polish.
const polishEvaluations = 20

// subsetSize returns the number of observations the starts of Fit run on
// for n observations and the setting s (n itself: no subset).
func subsetSize(n, s int) int {
	switch {
	case s < 0:
		return n
	case s > 0:
		return min(s, n)
	case n >= largeFitMin:
		return defaultFitSubset
	}
	return n
}

// fitSubset returns the sorted indices of m of n observations, drawn
// without replacement by a generator seeded with n alone.
func fitSubset(n, m int) []int {
	rng := rand.New(rand.NewPCG(0x5b5e7, uint64(n)))
	idx := rng.Perm(n)[:m]
	slices.Sort(idx)
	return idx
}

// subsetEval returns the evaluator of Fit's objective on the rows idx of
// e's data, with e's kernel family, noise setting and prior and the
// bounds b e was built with.
func (e *lmlEval) subsetEval(idx []int, b Bounds) *lmlEval {
	xs := mat.NewDense(len(idx), e.d, nil)
	ys := make([]float64, len(idx))
	for i, r := range idx {
		xs.SetRow(i, e.x.RawRowView(r))
		ys[i] = e.y[r]
	}
	s := newLMLEval(xs, ys, e.tmpl, e.fixedNoise, b)
	s.prior, s.ctx = e.prior, e.ctx
	return s
}

// polish minimizes e's per-observation objective F(u) (uObjective) by
// quasi-Newton steps from the best of the candidate starts θ (the subset
// optimum and, if any, the warm start; compared by value, a Cholesky
// factorization each, a third of an evaluation with the gradient), with
// at most polishEvaluations evaluations of F and its gradient on all
// data. The initial Hessian is the subset objective's at its optimum, by
// central differences of its gradient
// (2·nFree cheap evaluations): both objectives are per observation, so
// the subset's curvature approximates the full data's, and the first step
// is already close to Newton's. Its eigenvalues are floored to keep the
// steps descent directions; after each step the inverse is BFGS-updated.
// A step that does not decrease F is shortened fourfold. The polish stops
// when the predicted decrease ½ gᵀH⁻¹g is below polishTol nats of total
// log density. e.best is the best full-data θ seen.
func (e *lmlEval) polish(sub *lmlEval, starts ...[]float64) {
	nf := e.nFree()
	theta, gtheta := make([]float64, e.d+2), make([]float64, e.d+2)
	tol := polishTol / float64(e.n)
	var u []float64
	best := math.Inf(-1)
	for _, st := range starts {
		if st == nil {
			continue
		}
		cu := e.toU(st)
		if v := e.value(cu); v > best || u == nil {
			u, best = cu, v
		}
	}
	if u == nil {
		return
	}
	g := make([]float64, nf)
	evals := 1
	f := e.uObjective(u, g, theta, gtheta)
	if math.IsInf(f, 1) {
		return
	}
	hinv := sub.inverseHessian(e.toU(sub.best))
	p, un, gn := make([]float64, nf), make([]float64, nf), make([]float64, nf)
	step := 1.0
	for evals < polishEvaluations && !e.stopped() {
		pred := 0.0
		for i := range p {
			p[i] = 0
			for j := range g {
				p[i] -= hinv.At(i, j) * g[j]
			}
			pred -= 0.5 * p[i] * g[i]
		}
		if pred < tol {
			return
		}
		for i := range un {
			un[i] = u[i] + step*p[i]
		}
		evals++
		fn := e.uObjective(un, gn, theta, gtheta)
		// The pair (step, gradient change) informs the curvature whether
		// or not the step is taken (unless the evaluation failed): a
		// rejected step usually means the subset underestimated the
		// curvature along it.
		updated := !math.IsInf(fn, 1) && bfgsInverseUpdate(hinv, un, u, gn, g)
		if !(fn < f) {
			if !updated {
				step /= 4
			}
			continue
		}
		copy(u, un)
		copy(g, gn)
		f, step = fn, 1
	}
}

// polishTol is the predicted gain, in nats of total log density, below
// which the polish stops. One nat is the log-density difference between
// hyper-parameters about 1.4 posterior standard deviations apart along a
// single direction: well inside what the data leave uncertain, and far
// below what changes a BO proposal. In the steady state of a BO run (warm
// start from the last iteration's fit) it ends the polish after a few
// evaluations; chasing 0.1 nats takes more than twice as many.
const polishTol = 1.0

// inverseHessian returns the inverse of the Hessian of e's uObjective at
// u by central differences of its gradient (step 1e-4), symmetrized, with
// eigenvalues floored at 1e-6 of the largest (and at 1e-12).
func (e *lmlEval) inverseHessian(u []float64) *mat.SymDense {
	nf := len(u)
	theta, gtheta := make([]float64, e.d+2), make([]float64, e.d+2)
	h := mat.NewDense(nf, nf, nil)
	up, gp, gm := append([]float64(nil), u...), make([]float64, nf), make([]float64, nf)
	const step = 1e-4
	for j := range u {
		up[j] = u[j] + step
		e.uObjective(up, gp, theta, gtheta)
		up[j] = u[j] - step
		e.uObjective(up, gm, theta, gtheta)
		up[j] = u[j]
		for i := range gp {
			h.Set(i, j, (gp[i]-gm[i])/(2*step))
		}
	}
	sym := mat.NewSymDense(nf, nil)
	for i := 0; i < nf; i++ {
		for j := i; j < nf; j++ {
			sym.SetSym(i, j, 0.5*(h.At(i, j)+h.At(j, i)))
		}
	}
	var eig mat.EigenSym
	inv := mat.NewSymDense(nf, nil)
	if !eig.Factorize(sym, true) || !finite(sym.RawSymmetric().Data) {
		for i := 0; i < nf; i++ {
			inv.SetSym(i, i, 1) // plain gradient steps
		}
		return inv
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	floor := math.Max(1e-6*slices.Max(vals), 1e-12)
	for i := 0; i < nf; i++ {
		for j := i; j < nf; j++ {
			var v float64
			for k, l := range vals {
				v += vecs.At(i, k) * vecs.At(j, k) / math.Max(l, floor)
			}
			inv.SetSym(i, j, v)
		}
	}
	return inv
}

// bfgsInverseUpdate applies the BFGS update to the inverse Hessian
// approximation hinv for the step s = un − u with gradient change
// y = gn − g: H⁻¹ ← (I − ρ s yᵀ) H⁻¹ (I − ρ y sᵀ) + ρ s sᵀ, ρ = 1/(yᵀs),
// skipped unless yᵀs > 0 (the update would lose positive definiteness);
// it reports whether it updated.
func bfgsInverseUpdate(hinv *mat.SymDense, un, u, gn, g []float64) bool {
	n := len(u)
	s, y := make([]float64, n), make([]float64, n)
	var ys float64
	for i := range s {
		s[i], y[i] = un[i]-u[i], gn[i]-g[i]
		ys += y[i] * s[i]
	}
	if !(ys > 0) {
		return false
	}
	rho := 1 / ys
	hy := make([]float64, n) // H⁻¹ y
	var yhy float64
	for i := range hy {
		for j := range y {
			hy[i] += hinv.At(i, j) * y[j]
		}
		yhy += y[i] * hy[i]
	}
	// Expanded: H⁻¹ − ρ(s hyᵀ + hy sᵀ) + (ρ² yᵀH⁻¹y + ρ) s sᵀ.
	c := rho*rho*yhy + rho
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			hinv.SetSym(i, j, hinv.At(i, j)-rho*(s[i]*hy[j]+hy[i]*s[j])+c*s[i]*s[j])
		}
	}
	return true
}

// value returns log p(y|θ) + log p(θ) at θ = toTheta(u) without the
// gradient (−Inf if the factorization fails): a GP on e's data and the
// prior's log density, summed as objective sums them.
func (e *lmlEval) value(u []float64) float64 {
	if e.stopped() {
		return math.Inf(-1)
	}
	theta := make([]float64, e.d+2)
	e.toTheta(theta, u)
	g, err := New(e.tmpl.WithParams(theta[:e.d+1]), e.noiseOf(theta), e.x, e.y)
	if err != nil {
		return math.Inf(-1)
	}
	v := g.logMarginalLikelihood()
	if pr := e.prior; pr != nil {
		add := func(i int, mu, sd float64) {
			z := (theta[i] - mu) / sd
			v -= 0.5 * z * z
		}
		for i := 0; i < e.d; i++ {
			add(i, pr.LogLengthMean, pr.LogLengthSD)
		}
		add(e.d, pr.LogVarMean, pr.LogVarSD)
		if e.fixedNoise == 0 {
			add(e.d+1, pr.LogNoiseMean, pr.LogNoiseSD)
		}
	}
	return v
}
