package gp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"
)

// Prior is a weak independent Gaussian prior on the log hyper-parameters,
// used for MAP fitting: log ℓ_i ~ N(LogLengthMean, LogLengthSD²),
// log σ_s² ~ N(LogVarMean, LogVarSD²), log σ_n² ~ N(LogNoiseMean,
// LogNoiseSD²). Means are natural logs of values in unit-cube input units
// and standardized output units.
type Prior struct {
	LogLengthMean, LogLengthSD float64
	LogVarMean, LogVarSD       float64
	LogNoiseMean, LogNoiseSD   float64
}

// defaultPrior returns the prior Fit uses unless told otherwise: length-scales
// centred at 0.5 (half the unit cube) with a factor-e^1.5 ≈ 4.5 standard
// deviation, signal variance centred at 1 (standardized outputs) with the
// same spread, noise variance centred at 1e-2 with a factor-e³ ≈ 20 spread.
// It is weak: with tens of points the likelihood dominates, with 1–3 points
// it keeps the fit away from the degenerate ℓ → 0 / σ_s² → 0 solutions.
func defaultPrior() Prior {
	return Prior{
		LogLengthMean: math.Log(0.5), LogLengthSD: 1.5,
		LogVarMean: 0, LogVarSD: 1.5,
		LogNoiseMean: math.Log(1e-2), LogNoiseSD: 3,
	}
}

// ScaledPrior returns the prior the host uses by default: defaultPrior with
// a tighter length-scale prior whose centre grows with the dimension d and
// a signal-variance prior centred above the data's variance,
//
//	log ℓ_i ~ N(log(0.4·√(d/3)), 0.7²),   log σ_s² ~ N(log 6, 1),
//
// i.e. ℓ centred at 0.33 in 2-d, 0.4 in 3-d, 0.57 in 6-d and 0.8 in 12-d,
// with 95% of its mass within a factor 4 of the centre. The √d growth
// follows the typical distance between points of a design in [0,1]^d
// (Hvarfner, Hellsten & Nardi, ICML 2024). The tightness is what matters
// in BO: with the weak prior and few, clustered observations a dimension
// along which the data barely vary gets ℓ ≈ 5–10 (it looks irrelevant), the
// posterior-mean maximizer then sits on a face of the cube and nothing
// explores that dimension again (seen on Hartmann-3; the figures are in
// docs/results/README.md, "Measurements behind the code").
//
// The outputs are standardized over the evaluated points, but BO evaluates
// where the model expects high values, so the function's variance over the
// whole space is larger than theirs, and early on it is barely estimated.
// A signal variance centred at 6 (BoTorch's default prior, Gamma(2, 0.15),
// has its mode at 6.7) keeps the model from believing it has seen the
// function's whole range; it lets fewer Hartmann-3 runs settle on the
// second-best mode without changing the other benchmarks' results beyond
// their noise.
func ScaledPrior(d int) Prior {
	p := defaultPrior()
	p.LogLengthMean = math.Log(0.4) + 0.5*math.Log(float64(max(d, 1))/3)
	p.LogLengthSD = 0.7
	p.LogVarMean, p.LogVarSD = math.Log(6), 1
	return p
}

// Bounds are box bounds, in natural units, on the hyper-parameters during
// fitting ([low, high] each).
type Bounds struct {
	Length   [2]float64 // ℓ_i, unit-cube input units
	Variance [2]float64 // σ_s², standardized output units²
	Noise    [2]float64 // σ_n² (ignored with FixedNoise)
}

// DefaultBounds returns ℓ ∈ [5e-3, 100], σ_s² ∈ [1e-3, 100],
// σ_n² ∈ [1e-6, 10].
func DefaultBounds() Bounds {
	return Bounds{
		Length:   [2]float64{5e-3, 100},
		Variance: [2]float64{1e-3, 100},
		Noise:    [2]float64{1e-6, 10},
	}
}

// FitSettings configures Fit. The zero value is a sensible default.
type FitSettings struct {
	// Kernel is the kernel family (and, without Warm, the first starting
	// point). nil means SE ARD (the paper's kernel) starting from ℓ_i = 0.5,
	// σ_s² = 1.
	Kernel Kernel
	// FixedNoise > 0 fixes σ_n² at this value (the paper's synthetic runs
	// know the noise); 0 infers it.
	FixedNoise float64
	// Restarts is the number of L-BFGS starts. 0 means 5 without Warm and 1
	// (the warm start only) with Warm. Starts after the first are drawn
	// log-uniformly: ℓ ∈ [0.05, 2], σ_s² ∈ [0.3, 3], σ_n² ∈ [1e-4, 0.1].
	Restarts int
	// Warm, if non-nil, gives the first start: its kernel's and noise's
	// hyper-parameters (typically last BO iteration's fit). Its kernel is
	// also the family when Kernel is nil.
	Warm *GP
	// Rand drives the random restarts; nil means a fixed seed, so Fit is
	// deterministic.
	Rand *rand.Rand
	// NoPrior switches MAP off (plain maximum marginal likelihood).
	NoPrior bool
	// Prior replaces defaultPrior when non-nil.
	Prior *Prior
	// Bounds replaces DefaultBounds when non-nil.
	Bounds *Bounds
	// MaxIterations caps L-BFGS major iterations per start (0 means 200).
	MaxIterations int
	// Subset is the number of observations the starts run on: 0 means
	// defaultFitSubset from largeFitMin observations on and all of them
	// below, a negative value all of them always. When it is below n the
	// best start is polished on all observations (see largeFitMin).
	Subset int
}

// Fit returns the GP whose hyper-parameters θ = [log ℓ_1..log ℓ_d, log σ_s²,
// log σ_n²] maximise log p(y | X, θ) + log p(θ) (MAP; plain marginal
// likelihood with NoPrior) within box bounds, by multi-start L-BFGS with the
// analytic gradient (LogMarginalLikelihoodGrad). The bounds are imposed by
// the smooth transform θ = lo + (hi−lo)·sigmoid(u), u unconstrained.
// X (n×d, n ≥ 1) holds unit-cube inputs, y standardized outputs.
func Fit(X *mat.Dense, y []float64, s FitSettings) (*GP, error) {
	return FitContext(context.Background(), X, y, s)
}

// FitContext is Fit that stops when ctx is done and returns an error
// wrapping ctx.Err(). It checks ctx before each evaluation of the
// likelihood, so it returns within one evaluation (a Cholesky
// factorization and an inverse, about n³ flops: seconds at n in the
// thousands) of ctx being done.
func FitContext(ctx context.Context, X *mat.Dense, y []float64, s FitSettings) (*GP, error) {
	if X == nil {
		return nil, fmt.Errorf("fit gp: nil inputs (need at least one observation): %w", errBadInput)
	}
	n, d := X.Dims()
	if len(y) != n {
		return nil, fmt.Errorf("fit gp: %d inputs but %d outputs: %w", n, len(y), errBadInput)
	}
	if err := checkFiniteDense(X, "X"); err != nil {
		return nil, fmt.Errorf("fit gp: %w", err)
	}
	if err := checkFiniteVec(y, "y"); err != nil {
		return nil, fmt.Errorf("fit gp: %w", err)
	}
	if math.IsNaN(s.FixedNoise) || math.IsInf(s.FixedNoise, 0) || s.FixedNoise < 0 {
		return nil, fmt.Errorf("fit gp: FixedNoise %v must be finite and ≥ 0: %w", s.FixedNoise, errBadInput)
	}
	tmpl, err := fitTemplate(s, d)
	if err != nil {
		return nil, err
	}
	b := DefaultBounds()
	if s.Bounds != nil {
		b = *s.Bounds
	}
	e := newLMLEval(X, y, tmpl, s.FixedNoise, b)
	e.ctx = ctx
	if !s.NoPrior {
		p := defaultPrior()
		if s.Prior != nil {
			p = *s.Prior
		}
		e.prior = &p
	}
	rng := s.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(0x7e5b0, 1))
	}
	restarts := s.Restarts
	if restarts <= 0 {
		restarts = 5
		if s.Warm != nil {
			restarts = 1
		}
	}
	maxIter := s.MaxIterations
	if maxIter <= 0 {
		maxIter = 200
	}
	// First start: the warm start or the template.
	first := append(tmpl.Params(), math.Log(1e-2))
	if s.Warm != nil && s.Warm.Kernel().NumParams() == tmpl.NumParams() {
		first = append(s.Warm.Kernel().Params(), math.Log(math.Max(s.Warm.NoiseVar(), 1e-300)))
	}
	starts := e // the starts run on all data or, at large n, on a subset
	if m := subsetSize(n, s.Subset); m < n {
		starts = e.subsetEval(fitSubset(n, m), b)
	}
	var lastErr error
	for r := 0; r < restarts && ctx.Err() == nil; r++ {
		theta := first
		if r > 0 {
			theta = e.randomStart(rng)
		}
		if err := starts.optimize(theta, maxIter); err != nil {
			lastErr = err
		}
	}
	if starts != e && starts.best != nil {
		var warm []float64
		if s.Warm != nil {
			warm = first
		}
		e.polish(starts, starts.best, warm)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fit gp (n=%d, d=%d): stopped: %w", n, d, err)
	}
	if e.best == nil {
		if lastErr == nil {
			lastErr = errors.New("no finite likelihood found")
		}
		return nil, fmt.Errorf("fit gp (n=%d, d=%d): %w", n, d, lastErr)
	}
	k := tmpl.WithParams(e.best[:d+1])
	g, err := New(k, e.noiseOf(e.best), X, y)
	if err != nil {
		return nil, fmt.Errorf("fit gp: %w", err)
	}
	return g, nil
}

// fitTemplate is the kernel whose family Fit fits to d-column inputs:
// s.Kernel, the warm start's, or an SE kernel with length-scales 0.5.
func fitTemplate(s FitSettings, d int) (Kernel, error) {
	tmpl := s.Kernel
	if tmpl == nil && s.Warm != nil {
		tmpl = s.Warm.Kernel()
	}
	if tmpl == nil {
		ls := make([]float64, d)
		for i := range ls {
			ls[i] = 0.5
		}
		tmpl = NewSE(ls, 1)
	}
	if err := checkKernel(tmpl); err != nil {
		return nil, fmt.Errorf("fit gp: kernel template: %w", err)
	}
	if tmpl.Dim() != d {
		return nil, fmt.Errorf("fit gp: kernel dimension %d but X has %d columns: %w", tmpl.Dim(), d, errBadInput)
	}
	return tmpl, nil
}

// lmlEval evaluates the (MAP) objective and its gradient with reusable
// buffers.
type lmlEval struct {
	x          *mat.Dense
	y          []float64
	n, d       int
	tmpl       Kernel
	fixedNoise float64
	prior      *Prior
	lo, hi     []float64 // bounds on θ (log space), len d+2
	// ctx, when done, makes every evaluation fail at once (uObjective)
	// and stops the L-BFGS runs (optimize's Problem.Status); nil never is.
	ctx context.Context

	kbuf, lbuf []float64
	xs         []float64
	alpha      []float64
	ptmp       []float64
	dtmp       []float64 // ∂ mean diagonal / ∂ kernel params (generic kernels)

	best    []float64 // θ with the highest objective seen
	bestVal float64
}

func newLMLEval(X *mat.Dense, y []float64, tmpl Kernel, fixedNoise float64, b Bounds) *lmlEval {
	n, d := X.Dims()
	e := &lmlEval{
		x: X, y: y, n: n, d: d, tmpl: tmpl, fixedNoise: fixedNoise,
		lo: make([]float64, d+2), hi: make([]float64, d+2),
		kbuf: make([]float64, n*n), lbuf: make([]float64, n*n),
		xs: make([]float64, n*d), alpha: make([]float64, n),
		ptmp:    make([]float64, tmpl.NumParams()),
		dtmp:    make([]float64, tmpl.NumParams()),
		bestVal: math.Inf(-1),
	}
	for i := 0; i < d; i++ {
		e.lo[i], e.hi[i] = math.Log(b.Length[0]), math.Log(b.Length[1])
	}
	e.lo[d], e.hi[d] = math.Log(b.Variance[0]), math.Log(b.Variance[1])
	e.lo[d+1], e.hi[d+1] = math.Log(b.Noise[0]), math.Log(b.Noise[1])
	return e
}

func (e *lmlEval) noiseOf(theta []float64) float64 {
	if e.fixedNoise > 0 {
		return e.fixedNoise
	}
	return math.Exp(theta[e.d+1])
}

// nFree is the number of optimized parameters.
func (e *lmlEval) nFree() int {
	if e.fixedNoise > 0 {
		return e.d + 1
	}
	return e.d + 2
}

func (e *lmlEval) randomStart(rng *rand.Rand) []float64 {
	th := make([]float64, e.d+2)
	u := func(a, b float64) float64 { return math.Log(a) + rng.Float64()*(math.Log(b)-math.Log(a)) }
	for i := 0; i < e.d; i++ {
		th[i] = u(0.05, 2)
	}
	th[e.d] = u(0.3, 3)
	th[e.d+1] = u(1e-4, 0.1)
	return th
}

func sigmoid(u float64) float64 {
	if u >= 0 {
		return 1 / (1 + math.Exp(-u))
	}
	z := math.Exp(u)
	return z / (1 + z)
}

// toU maps a starting θ to the unconstrained u. The start is pulled at
// least 1% of the log-range inside the box: at a bound the sigmoid's slope
// vanishes and a warm start from a previous fit that sat on a bound (noise
// at its floor, an irrelevant dimension's ℓ at its ceiling) could never
// leave it.
func (e *lmlEval) toU(theta []float64) []float64 {
	u := make([]float64, e.nFree())
	for i := range u {
		lo, hi := e.lo[i], e.hi[i]
		t := (theta[i] - lo) / (hi - lo)
		if math.IsNaN(t) {
			t = 0.5
		}
		t = math.Min(math.Max(t, 0.01), 0.99)
		u[i] = math.Log(t / (1 - t))
	}
	return u
}

func (e *lmlEval) toTheta(dst, u []float64) {
	for i, ui := range u {
		dst[i] = e.lo[i] + (e.hi[i]-e.lo[i])*sigmoid(ui)
	}
	if e.fixedNoise > 0 {
		dst[e.d+1] = math.Log(e.fixedNoise)
	}
}

// optimize runs one L-BFGS start from θ0 and records the best point.
func (e *lmlEval) optimize(theta0 []float64, maxIter int) error {
	nf := e.nFree()
	theta := make([]float64, e.d+2)
	gtheta := make([]float64, e.d+2)
	var lastU []float64
	var lastF float64
	lastG := make([]float64, nf)
	eval := func(u []float64) {
		if lastU != nil && slices.Equal(lastU, u) {
			return
		}
		lastU = append(lastU[:0], u...)
		lastF = e.uObjective(u, lastG, theta, gtheta)
	}
	// Minimize calls Status before each evaluation: a done context ends
	// the run there.
	p := optimize.Problem{
		Func: func(u []float64) float64 { eval(u); return lastF },
		Grad: func(g, u []float64) { eval(u); copy(g, lastG) },
		Status: func() (optimize.Status, error) {
			if e.stopped() {
				return optimize.Failure, e.ctx.Err()
			}
			return optimize.NotTerminated, nil
		},
	}
	// L-BFGS cannot start from a failed evaluation (F = +Inf, zero
	// gradient): its line search never ends. The start is evaluated here,
	// and Minimize's first evaluation reuses it.
	u0 := e.toU(theta0)
	if eval(u0); math.IsInf(lastF, 1) {
		if e.stopped() {
			return e.ctx.Err()
		}
		return errors.New("likelihood not finite at the start")
	}
	// Tolerances are on the per-observation objective. On GP data the
	// More–Thuente line search needs fewer evaluations than gonum's default
	// bisection, and these tolerances change the fitted LML by a negligible
	// amount compared with 10× tighter ones while cutting warm-start
	// evaluations severalfold (docs/results/README.md, "Measurements behind
	// the code").
	settings := &optimize.Settings{
		GradientThreshold: 1e-4,
		MajorIterations:   maxIter,
		Converger:         &optimize.FunctionConverge{Absolute: 1e-6, Relative: 1e-6, Iterations: 2},
	}
	_, err := optimize.Minimize(p, u0, settings, &optimize.LBFGS{Linesearcher: &optimize.MoreThuente{}})
	if err != nil && e.best != nil {
		// Line-search failures near the optimum are common and harmless:
		// the best point seen is kept.
		return nil
	}
	return err
}

// stopped reports whether e's context is done.
func (e *lmlEval) stopped() bool { return e.ctx != nil && e.ctx.Err() != nil }

// uObjective is the function L-BFGS minimizes: F(u) = −(log p(y|θ) +
// log p(θ))/n at θ = toTheta(u), i.e. θ_i = lo_i + (hi_i−lo_i)·sigmoid(u_i).
// It writes ∂F/∂u into gu (len nFree()) by the chain rule, ∂θ_i/∂u_i =
// (hi_i−lo_i)·s(1−s) with s = sigmoid(u_i). The 1/n scaling keeps the
// optimizer's tolerances per observation. A failed or non-finite
// evaluation gives F = +Inf and a zero gradient, which the line search
// backs off from. theta and gtheta are scratch of len d+2.
func (e *lmlEval) uObjective(u, gu, theta, gtheta []float64) float64 {
	if e.stopped() {
		clear(gu[:e.nFree()])
		return math.Inf(1)
	}
	scale := 1 / float64(e.n)
	e.toTheta(theta, u)
	v, err := e.objective(theta, gtheta)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		clear(gu[:e.nFree()])
		return math.Inf(1)
	}
	for i := 0; i < e.nFree(); i++ {
		s := sigmoid(u[i])
		gu[i] = -gtheta[i] * (e.hi[i] - e.lo[i]) * s * (1 - s) * scale
	}
	return -v * scale
}

// objective returns log p(y|θ) + log p(θ) and writes its gradient with
// respect to θ (len d+2; the noise entry is 0 with FixedNoise).
func (e *lmlEval) objective(theta, grad []float64) (float64, error) {
	d := e.d
	k := e.tmpl.WithParams(theta[:d+1])
	noise := e.noiseOf(theta)
	v, err := lmlGrad(k, noise, e.x, e.y, e.fixedNoise == 0, grad, e, nil)
	if err != nil {
		return 0, err
	}
	if e.prior != nil {
		pr := e.prior
		add := func(i int, mu, sd float64) {
			z := (theta[i] - mu) / sd
			v -= 0.5 * z * z
			grad[i] -= z / sd
		}
		for i := 0; i < d; i++ {
			add(i, pr.LogLengthMean, pr.LogLengthSD)
		}
		add(d, pr.LogVarMean, pr.LogVarSD)
		if e.fixedNoise == 0 {
			add(d+1, pr.LogNoiseMean, pr.LogNoiseSD)
		}
	}
	if v > e.bestVal && !math.IsNaN(v) {
		e.bestVal = v
		e.best = append(e.best[:0], theta...)
	}
	return v, nil
}
