// Package classify is Gaussian-process binary classification: it learns the
// probability that an evaluation at x succeeds from points labelled success
// or failure, so that a BO loop can stop proposing where evaluations fail.
//
// # Model
//
// A latent function f ~ GP(0, k) with an ARD Matérn-5/2 kernel of package
// gp, and the probit likelihood
//
//	p(y_i | f_i) = Φ(y_i f_i),  y_i = +1 (success) or −1 (failure).
//
// The posterior p(f | y) is replaced by its Laplace approximation
// N(f̂, (K⁻¹ + W)⁻¹) (Rasmussen & Williams 2006, §3.4): f̂ maximizes
// Ψ(f) = log p(y|f) − ½ fᵀK⁻¹f, found by Newton's method, and
// W = −∇∇ log p(y|f̂) is diagonal with
//
//	W_ii = λ(z_i)² + z_i λ(z_i),  z_i = y_i f̂_i,  λ(z) = φ(z)/Φ(z).
//
// With B = I + W^½ K W^½ = LLᵀ, the latent predictive at a query x is
//
//	μ(x)  = k(x)ᵀ ∇log p(y|f̂),
//	σ²(x) = k(x,x) − vᵀv,  v = L⁻¹ W^½ k(x),
//
// and the success probability is the plug-in
//
//	p(success | x) = Φ(μ(x)).
//
// The predictive probability ∫ Φ(f) N(f; μ, σ²) df = Φ(μ/√(1+σ²)) would
// also average over σ², but the Laplace σ² stays near the prior variance
// even among many failures (W → 0 at points classified with confidence),
// which keeps the predictive near ½ — about 0.15 among four failures
// 0.08 apart. Failures of a BO objective are no label noise but a
// property of the region, so the plug-in, which falls to ~0.02 there, is
// what the BO loop needs; Latent still gives σ² for callers who want the
// predictive.
//
// Far from every labelled point μ → 0 and p → ½: the classifier neither
// trusts nor distrusts unexplored regions.
//
// # Hyper-parameters
//
// Fit chooses the length-scales by the Laplace approximation of the log
// marginal likelihood,
//
//	log q(y) = −½ f̂ᵀ K⁻¹ f̂ + log p(y|f̂) − Σ log L_ii,
//
// over a fixed grid rather than by gradient steps (a grid cannot get stuck
// and the result is a deterministic function of the data): a common
// length-scale from a grid (0.05 to 0.8), then one pass over the dimensions that
// halves or doubles each length-scale alone while that improves log q
// (ARD). The grid suits inputs in the unit cube.
//
// The signal variance is not chosen by log q. Failures of a deterministic
// objective are a property of the region, not label noise, but the probit
// likelihood is satisfied once y_i f_i ≈ 2, and log q often prefers a small
// σ_s² (9) with which p(success) at a failed point itself is still ≈ 0.05.
// With σ_s² = 49 the classifier becomes confident where failures were
// observed, and more proposals avoid the failing regions than when log q
// picks σ_s² (docs/results/README.md, "Measurements behind the code").
package classify

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/internal/linalg"
)

// lengthscaleGrid is the grid of common length-scales Fit tries
// (unit-cube units).
var lengthscaleGrid = []float64{0.05, 0.1, 0.2, 0.4, 0.8}

// signalVariance is the latent σ_s², fixed for the reason given in the
// package documentation.
const signalVariance = 49

// maxPoints bounds the labelled points Fit uses. Each of its 2d + 5
// Laplace fits costs a few O(n³) factorizations: with every trial kept, a
// fit of a thousand points takes longer than the rest of a BO iteration at
// that size (docs/results/README.md, "Measurements behind the code").
// Beyond maxPoints Fit keeps a subset (see subset) that holds the failures
// and the successes that bound them.
const maxPoints = 300

// errBadInput is wrapped by the errors Fit returns for unusable data.
var errBadInput = errors.New("invalid input")

// Classifier is a fitted GP classifier. It is immutable and safe for
// concurrent use.
type Classifier struct {
	k     gp.Kernel
	xs    *mat.Dense    // n×d labelled inputs
	grad  []float64     // ∇log p(y|f̂): the weights of k(x) in μ(x)
	sqrtW []float64     // W^½
	L     *mat.TriDense // lower Cholesky factor of B = I + W^½ K W^½
	lml   float64
}

// Fit fits the classifier to the rows of X labelled by success (true: the
// evaluation succeeded). It needs at least one point; with labels of a
// single class it still fits (p moves towards that class near the data).
// With more than maxPoints rows it fits the subset described at subset.
func Fit(X *mat.Dense, success []bool) (*Classifier, error) {
	if X == nil {
		return nil, fmt.Errorf("classify: no inputs: %w", errBadInput)
	}
	n, d := X.Dims()
	if n == 0 || len(success) != n {
		return nil, fmt.Errorf("classify: %d inputs and %d labels, need the same positive number: %w", n, len(success), errBadInput)
	}
	for _, v := range X.RawMatrix().Data {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("classify: input coordinate %v is not finite: %w", v, errBadInput)
		}
	}
	if n > maxPoints {
		X, success = subset(X, success, maxPoints)
		n = len(success)
	}
	y := make([]float64, n)
	for i, s := range success {
		y[i] = -1
		if s {
			y[i] = 1
		}
	}
	// best is the fit with the largest log q so far; try replaces it by
	// a better one.
	var best *Classifier
	try := func(ls []float64, s2 float64) {
		c, err := fitKernel(gp.NewMatern52(ls, s2), X, y)
		if err == nil && (best == nil || c.lml > best.lml) {
			best = c
		}
	}
	for _, l := range lengthscaleGrid {
		ls := make([]float64, d)
		for i := range ls {
			ls[i] = l
		}
		try(ls, signalVariance)
	}
	if best == nil {
		return nil, fmt.Errorf("classify: no kernel of the grid gave a Laplace approximation (the Newton iterations failed for every one)")
	}
	// ARD: one pass halving or doubling each length-scale alone.
	for i := 0; i < d && d > 1; i++ {
		for _, f := range []float64{0.5, 2} {
			ls, s2 := best.params()
			ls[i] *= f
			try(ls, s2)
		}
	}
	return best, nil
}

// params returns the kernel's length-scales and signal variance.
func (c *Classifier) params() ([]float64, float64) {
	p := c.k.Params()
	d := len(p) - 1
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = math.Exp(p[i])
	}
	return ls, math.Exp(p[d])
}

// Kernel returns the fitted kernel.
func (c *Classifier) Kernel() gp.Kernel { return c.k }

// newtonIters bounds the Newton iterations of the mode search; probit
// posteriors are log-concave and converge in well under this.
const newtonIters = 100

// fitKernel finds the Laplace mode f̂ for kernel k (Rasmussen & Williams
// Algorithm 3.1, with step halving when Ψ would decrease).
func fitKernel(k gp.Kernel, X *mat.Dense, y []float64) (*Classifier, error) {
	n, _ := X.Dims()
	K := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			K.SetSym(i, j, k.Eval(X.RawRowView(i), X.RawRowView(j)))
		}
	}
	f := make([]float64, n)
	a := make([]float64, n)
	psi := func(a, f []float64) float64 {
		v := 0.0
		for i := range f {
			v += linalg.LogPhi(y[i]*f[i]) - 0.5*a[i]*f[i]
		}
		return v
	}
	cur := psi(a, f)
	var L *mat.Cholesky
	var sw, g []float64
	for it := 0; it < newtonIters; it++ {
		var err error
		sw, g, L, err = laplaceFactor(K, f, y)
		if err != nil {
			return nil, err
		}
		// b = W f + ∇log p;  a = b − W^½ L⁻ᵀ L⁻¹ W^½ K b;  f = K a.
		b := make([]float64, n)
		for i := range b {
			b[i] = sw[i]*sw[i]*f[i] + g[i]
		}
		Kb := mulVec(K, b)
		for i := range Kb {
			Kb[i] *= sw[i]
		}
		sol := mat.NewVecDense(n, nil)
		if err := L.SolveVecTo(sol, mat.NewVecDense(n, Kb)); err != nil {
			return nil, fmt.Errorf("classify: Newton step: %w", err)
		}
		na := make([]float64, n)
		for i := range na {
			na[i] = b[i] - sw[i]*sol.AtVec(i)
		}
		nf := mulVec(K, na)
		next := psi(na, nf)
		for h := 0; h < 30 && next < cur; h++ {
			for i := range na {
				na[i] = 0.5 * (na[i] + a[i])
			}
			nf = mulVec(K, na)
			next = psi(na, nf)
		}
		done := math.Abs(next-cur) < 1e-10*math.Max(1, math.Abs(cur))
		a, f, cur = na, nf, math.Max(cur, next)
		if done {
			break
		}
	}
	sw, g, L, err := laplaceFactor(K, f, y)
	if err != nil {
		return nil, err
	}
	logDetHalf := 0.5 * L.LogDet()
	lml := cur - logDetHalf
	if math.IsNaN(lml) || math.IsInf(lml, 0) {
		return nil, fmt.Errorf("classify: log marginal likelihood is %v", lml)
	}
	Lt := new(mat.TriDense)
	L.LTo(Lt)
	return &Classifier{k: k, xs: X, grad: g, sqrtW: sw, L: Lt, lml: lml}, nil
}

// laplaceFactor returns W^½, ∇log p(y|f) and the Cholesky factor of
// B = I + W^½ K W^½ at f.
func laplaceFactor(K *mat.SymDense, f, y []float64) (sw, g []float64, L *mat.Cholesky, err error) {
	n := len(f)
	sw, g = make([]float64, n), make([]float64, n)
	for i := range f {
		z := y[i] * f[i]
		l := linalg.InvMills(z)
		g[i] = y[i] * l
		sw[i] = math.Sqrt(math.Max(l*l+z*l, 0))
	}
	B := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := sw[i] * K.At(i, j) * sw[j]
			if i == j {
				v++
			}
			B.SetSym(i, j, v)
		}
	}
	L = new(mat.Cholesky)
	if !L.Factorize(B) {
		return nil, nil, nil, fmt.Errorf("classify: I + W^½KW^½ is not positive definite")
	}
	return sw, g, L, nil
}

func mulVec(K *mat.SymDense, v []float64) []float64 {
	out := mat.NewVecDense(len(v), nil)
	out.MulVec(K, mat.NewVecDense(len(v), v))
	return out.RawVector().Data
}

// latent returns the latent predictive mean μ(x) and variance σ²(x). If dmu
// and dvar are non-nil (len d) it writes ∇μ and ∇σ² into them.
func (c *Classifier) latent(x, dmu, dvar []float64) (mu, vr float64) {
	n, d := c.xs.Dims()
	ks := make([]float64, n)
	var dk [][]float64
	if dmu != nil || dvar != nil {
		dk = make([][]float64, n)
	}
	for j := 0; j < n; j++ {
		if dk != nil {
			dk[j] = make([]float64, d)
			ks[j] = c.k.GradX(dk[j], x, c.xs.RawRowView(j))
		} else {
			ks[j] = c.k.Eval(x, c.xs.RawRowView(j))
		}
		mu += c.grad[j] * ks[j]
	}
	// v = L⁻¹ W^½ k(x) through the lower triangular factor.
	w := make([]float64, n)
	for j := range w {
		w[j] = c.sqrtW[j] * ks[j]
	}
	v := mat.NewVecDense(n, nil)
	if err := v.SolveVec(c.L, mat.NewVecDense(n, w)); err != nil {
		return math.NaN(), math.NaN()
	}
	vr = math.Max(c.k.Variance()-mat.Dot(v, v), 0)
	if dmu != nil {
		for i := range dmu {
			dmu[i] = 0
		}
		for j := 0; j < n; j++ {
			for i := range dmu {
				dmu[i] += c.grad[j] * dk[j][i]
			}
		}
	}
	if dvar != nil {
		// ∇σ² = −2 Σ_j c_j ∇k(x, x_j),  c = W^½ L⁻ᵀ v.
		cv := mat.NewVecDense(n, nil)
		if err := cv.SolveVec(c.L.T(), v); err != nil {
			return math.NaN(), math.NaN()
		}
		for i := range dvar {
			dvar[i] = 0
		}
		for j := 0; j < n; j++ {
			cj := -2 * c.sqrtW[j] * cv.AtVec(j)
			for i := range dvar {
				dvar[i] += cj * dk[j][i]
			}
		}
	}
	return mu, vr
}

// prob returns p(success | x) = Φ(μ(x)); if grad is non-nil (len d) it
// writes ∇p into it.
func (c *Classifier) prob(x, grad []float64) float64 {
	p := math.Exp(c.LogProb(x, grad))
	for i := range grad {
		grad[i] *= p
	}
	return p
}

// LogProb returns log p(success | x) = log Φ(μ(x)), accurate also where p
// underflows; if grad is non-nil (len d) it writes ∇log p = λ(μ)∇μ into it.
func (c *Classifier) LogProb(x, grad []float64) float64 {
	mu := c.mean(x, grad)
	if grad != nil {
		l := linalg.InvMills(mu)
		for i := range grad {
			grad[i] *= l
		}
	}
	return linalg.LogPhi(mu)
}

// mean returns μ(x) and writes ∇μ into grad when non-nil; it skips the
// variance's triangular solve.
func (c *Classifier) mean(x, grad []float64) float64 {
	n, _ := c.xs.Dims()
	for i := range grad {
		grad[i] = 0
	}
	var dk []float64
	if grad != nil {
		dk = make([]float64, len(x))
	}
	mu := 0.0
	for j := 0; j < n; j++ {
		if grad == nil {
			mu += c.grad[j] * c.k.Eval(x, c.xs.RawRowView(j))
			continue
		}
		mu += c.grad[j] * c.k.GradX(dk, x, c.xs.RawRowView(j))
		for i := range grad {
			grad[i] += c.grad[j] * dk[i]
		}
	}
	return mu
}
