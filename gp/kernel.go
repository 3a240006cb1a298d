package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Kernel is a stationary covariance function k(x, y) on R^d whose
// hyper-parameters are kept in log space:
//
//	Params() = [log ℓ_1, ..., log ℓ_d, log σ_s²]
//
// where ℓ_i are the ARD length-scales (in the units of the inputs, i.e. of
// the unit cube) and σ_s² = k(x, x) is the signal variance (in squared
// standardized output units). Kernels are immutable and safe for concurrent
// use.
//
// Preconditions. The evaluation methods (Eval, GradX, ParamGrad, Variance,
// SampleFrequencies) assume a valid kernel, checkKernel(k) == nil, and
// finite x, y of length Dim() whose scaled squared distance Σ(x_i−y_i)²/ℓ_i²
// does not overflow (|x_i−y_i|/ℓ_i ≲ 1e153; Matérn-5/2 would give Inf·0
// there); they do not check, and return NaN otherwise. NewSE and NewMatern52 cannot build an invalid kernel (they
// panic instead). WithParams accepts any log-parameters of the right
// length, because the fit explores them, so WithParams with NaN or extreme
// values (|log ℓ_i| ≳ 350, |log σ_s²| ≳ 700) gives an invalid kernel: every
// public entry point that takes a Kernel (New, Fit, CrossCov) checks it.
type Kernel interface {
	// Dim returns the input dimension d.
	Dim() int
	// NumParams returns the number of hyper-parameters, d+1.
	NumParams() int
	// Params returns a copy of the log hyper-parameters.
	Params() []float64
	// WithParams returns a new kernel of the same family with the given log
	// hyper-parameters (len d+1).
	WithParams(p []float64) Kernel
	// Variance returns σ_s² = k(x, x).
	Variance() float64
	// Eval returns k(x, y).
	Eval(x, y []float64) float64
	// GradX writes ∂k(x,y)/∂x into dst (len d) and returns k(x, y).
	GradX(dst, x, y []float64) float64
	// ParamGrad writes ∂k(x,y)/∂(log params) into dst (len d+1) and
	// returns k(x, y).
	ParamGrad(dst, x, y []float64) float64
	// SampleFrequencies draws m frequencies ω (one per row of the m×d
	// result) from the kernel's spectral density normalised to a probability
	// density, so that k(x,y) = σ_s² E_ω[cos(ωᵀ(x−y))] (Bochner's theorem;
	// random Fourier features).
	SampleFrequencies(rng *rand.Rand, m int) *mat.Dense
}

// checkKernel returns nil if k is usable: non-nil, Dim() ≥ 1, NumParams()
// = Dim()+1 = len(Params()), every log-parameter finite and σ_s² =
// Variance() finite and > 0; for this package's kernels also 1/ℓ_i² finite
// (ℓ_i ≳ 1e-154; smaller length-scales overflow the scaled distance and give
// NaN at r = 0). Otherwise it returns an error wrapping errBadInput that
// names the offending parameter.
func checkKernel(k Kernel) error {
	if k == nil {
		return fmt.Errorf("nil kernel: %w", errBadInput)
	}
	d := k.Dim()
	if d < 1 {
		return fmt.Errorf("kernel dimension %d, need ≥ 1: %w", d, errBadInput)
	}
	p := k.Params()
	if k.NumParams() != d+1 || len(p) != d+1 {
		return fmt.Errorf("kernel of dimension %d has %d parameters (NumParams %d), want %d: %w", d, len(p), k.NumParams(), d+1, errBadInput)
	}
	for i, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("kernel log-parameter %d is %v (parameters %v): %w", i, v, p, errBadInput)
		}
	}
	if s2 := k.Variance(); !(s2 > 0) || math.IsInf(s2, 1) {
		return fmt.Errorf("kernel signal variance σ_s² = %v (log %v) must be finite and > 0: %w", s2, p[d], errBadInput)
	}
	if a, ok := k.(interface{ ard() *ardParams }); ok {
		if err := a.ard().checkScale(); err != nil {
			return fmt.Errorf("kernel %w: %w", err, errBadInput)
		}
	}
	return nil
}

// radialKernel is implemented by the kernels of this package: k depends on
// x, y only through r² = Σ_i (x_i−y_i)²/ℓ_i². It lets the GP precompute
// inputs scaled by 1/ℓ and evaluate cross-covariances without interface
// calls per pair (the hot path of Predict).
type radialKernel interface {
	Kernel
	// invLengths returns 1/ℓ_i (shared; do not modify).
	invLengths() []float64
	// fromR2 returns k as a function of the scaled squared distance r².
	fromR2(r2 float64) float64
	// dFromR2 returns k(r²) and dk/d(r²).
	dFromR2(r2 float64) (k, dk float64)
	// dFromR2K returns dk/d(r²) given r² and k = k(r²), without another
	// exponential (the fit loop already has k).
	dFromR2K(r2, k float64) float64
}

// ardParams holds the log parameters shared by the ARD kernels.
type ardParams struct {
	logp []float64 // [log ℓ_1..log ℓ_d, log σ_s²]
	inv  []float64 // 1/ℓ_i
	inv2 []float64 // 1/ℓ_i²
	s2   float64   // σ_s²
}

// newARD builds the parameters from natural units, panicking (name is the
// constructor, for the message) on values that would make the kernel
// return NaN: the constructors are called with literal or computed
// constants, so an invalid value is a programming error, like a bad
// dimension in gonum's NewDense.
func newARD(name string, lengthscales []float64, variance float64) ardParams {
	if len(lengthscales) == 0 {
		panic(fmt.Sprintf("gp: %s: no length-scales (need one per input dimension, d ≥ 1)", name))
	}
	for i, l := range lengthscales {
		if !(l > 0) || math.IsInf(l, 1) {
			panic(fmt.Sprintf("gp: %s: length-scale ℓ_%d = %v must be finite and > 0", name, i, l))
		}
	}
	if !(variance > 0) || math.IsInf(variance, 1) {
		panic(fmt.Sprintf("gp: %s: signal variance σ_s² = %v must be finite and > 0", name, variance))
	}
	p := make([]float64, len(lengthscales)+1)
	for i, l := range lengthscales {
		p[i] = math.Log(l)
	}
	p[len(lengthscales)] = math.Log(variance)
	a := ardFromLog(p)
	if err := a.checkScale(); err != nil {
		panic(fmt.Sprintf("gp: %s: %v", name, err))
	}
	return a
}

// checkScale reports a length-scale so small that 1/ℓ² overflows (the
// scaled distance would be NaN at r = 0).
func (a *ardParams) checkScale() error {
	for i, w := range a.inv2 {
		if math.IsInf(w, 0) {
			return fmt.Errorf("length-scale ℓ_%d = %v is too small (1/ℓ² overflows)", i, math.Exp(a.logp[i]))
		}
	}
	return nil
}

func ardFromLog(p []float64) ardParams {
	d := len(p) - 1
	a := ardParams{
		logp: append([]float64(nil), p...),
		inv:  make([]float64, d),
		inv2: make([]float64, d),
		s2:   math.Exp(p[d]),
	}
	for i := 0; i < d; i++ {
		a.inv[i] = math.Exp(-p[i])
		a.inv2[i] = a.inv[i] * a.inv[i]
	}
	return a
}

func (a *ardParams) ard() *ardParams   { return a }
func (a *ardParams) Dim() int          { return len(a.inv) }
func (a *ardParams) NumParams() int    { return len(a.logp) }
func (a *ardParams) Params() []float64 { return append([]float64(nil), a.logp...) }
func (a *ardParams) Variance() float64 { return a.s2 }
func (a *ardParams) invLengths() []float64 {
	return a.inv
}

// Lengthscales returns a copy of ℓ_1..ℓ_d.
func (a *ardParams) Lengthscales() []float64 {
	l := make([]float64, len(a.inv))
	for i, v := range a.inv {
		l[i] = 1 / v
	}
	return l
}

// r2 returns Σ (x_i−y_i)²/ℓ_i².
func (a *ardParams) r2(x, y []float64) float64 {
	var s float64
	for i, w := range a.inv2 {
		t := x[i] - y[i]
		s += t * t * w
	}
	return s
}

func checkParams(p []float64, d int, name string) {
	if len(p) != d+1 {
		panic(fmt.Sprintf("gp: %s.WithParams: got %d parameters, want %d", name, len(p), d+1))
	}
}

// SE is the squared-exponential kernel with ARD length-scales (the paper's
// kernel, §3):
//
//	k(x, y) = σ_s² exp(−½ (x−y)ᵀ Λ⁻² (x−y)),  Λ = diag(ℓ_1, ..., ℓ_d).
type SE struct{ ardParams }

// NewSE returns an SE kernel with the given length-scales ℓ_i > 0 (input
// units) and signal variance σ_s² > 0. It panics unless d = len(lengthscales)
// ≥ 1 and every value is finite and > 0 (and ℓ_i ≳ 1e-154, see
// checkKernel): an invalid kernel would evaluate to NaN.
func NewSE(lengthscales []float64, variance float64) *SE {
	return &SE{newARD("NewSE", lengthscales, variance)}
}

// WithParams returns an SE kernel with log parameters p = [log ℓ, log σ_s²].
func (k *SE) WithParams(p []float64) Kernel {
	checkParams(p, k.Dim(), "SE")
	return &SE{ardFromLog(p)}
}

func (k *SE) fromR2(r2 float64) float64 { return k.s2 * math.Exp(-0.5*r2) }

func (k *SE) dFromR2(r2 float64) (float64, float64) {
	v := k.s2 * math.Exp(-0.5*r2)
	return v, -0.5 * v
}

func (k *SE) dFromR2K(_, kv float64) float64 { return -0.5 * kv }

// Eval returns k(x, y).
func (k *SE) Eval(x, y []float64) float64 { return k.fromR2(k.r2(x, y)) }

// GradX writes ∂k/∂x_i = −k (x_i−y_i)/ℓ_i² into dst and returns k.
func (k *SE) GradX(dst, x, y []float64) float64 {
	return gradXRadial(k, &k.ardParams, dst, x, y)
}

// ParamGrad writes ∂k/∂log ℓ_i = k (x_i−y_i)²/ℓ_i² and ∂k/∂log σ_s² = k into
// dst and returns k.
func (k *SE) ParamGrad(dst, x, y []float64) float64 {
	return paramGradRadial(k, &k.ardParams, dst, x, y)
}

// SampleFrequencies draws ω_i ~ N(0, 1/ℓ_i²) independently: the SE spectral
// density is Gaussian.
func (k *SE) SampleFrequencies(rng *rand.Rand, m int) *mat.Dense {
	d := k.Dim()
	w := mat.NewDense(m, d, nil)
	raw := w.RawMatrix()
	for r := 0; r < m; r++ {
		row := raw.Data[r*raw.Stride : r*raw.Stride+d]
		for i := range row {
			row[i] = rng.NormFloat64() * k.inv[i]
		}
	}
	return w
}

// Matern52 is the Matérn-5/2 kernel with ARD length-scales:
//
//	k(x, y) = σ_s² (1 + √5 r + 5r²/3) exp(−√5 r),  r² = (x−y)ᵀ Λ⁻² (x−y).
type Matern52 struct{ ardParams }

// NewMatern52 returns a Matérn-5/2 kernel with length-scales ℓ_i > 0 and
// signal variance σ_s² > 0; it panics on invalid values, like NewSE.
func NewMatern52(lengthscales []float64, variance float64) *Matern52 {
	return &Matern52{newARD("NewMatern52", lengthscales, variance)}
}

// WithParams returns a Matérn-5/2 kernel with log parameters p.
func (k *Matern52) WithParams(p []float64) Kernel {
	checkParams(p, k.Dim(), "Matern52")
	return &Matern52{ardFromLog(p)}
}

const sqrt5 = 2.23606797749979

func (k *Matern52) fromR2(r2 float64) float64 {
	r := math.Sqrt(r2)
	return k.s2 * (1 + sqrt5*r + 5.0/3.0*r2) * math.Exp(-sqrt5*r)
}

// dFromR2: dk/dr = −(5/3) σ_s² r (1+√5 r) e^{−√5 r}, dr/d(r²) = 1/(2r), so
// dk/d(r²) = −(5/6) σ_s² (1+√5 r) e^{−√5 r}, finite at r = 0.
func (k *Matern52) dFromR2(r2 float64) (float64, float64) {
	r := math.Sqrt(r2)
	e := k.s2 * math.Exp(-sqrt5*r)
	return (1 + sqrt5*r + 5.0/3.0*r2) * e, -5.0 / 6.0 * (1 + sqrt5*r) * e
}

// dFromR2K uses dk/d(r²) = −(5/6)(1+√5 r)/(1+√5 r+5r²/3) · k.
func (k *Matern52) dFromR2K(r2, kv float64) float64 {
	r := math.Sqrt(r2)
	return -5.0 / 6.0 * (1 + sqrt5*r) / (1 + sqrt5*r + 5.0/3.0*r2) * kv
}

// Eval returns k(x, y).
func (k *Matern52) Eval(x, y []float64) float64 { return k.fromR2(k.r2(x, y)) }

// GradX writes ∂k/∂x_i = −(5/3) σ_s² (1+√5 r) e^{−√5 r} (x_i−y_i)/ℓ_i² into
// dst and returns k.
func (k *Matern52) GradX(dst, x, y []float64) float64 {
	return gradXRadial(k, &k.ardParams, dst, x, y)
}

// ParamGrad writes ∂k/∂log ℓ_i and ∂k/∂log σ_s² = k into dst and returns k.
func (k *Matern52) ParamGrad(dst, x, y []float64) float64 {
	return paramGradRadial(k, &k.ardParams, dst, x, y)
}

// SampleFrequencies draws ω from the Matérn-5/2 spectral density, a
// multivariate Student-t with 5 degrees of freedom and scale Λ⁻¹:
// ω_i = z_i/ℓ_i · sqrt(5/u), z ~ N(0, I), u ~ χ²_5.
func (k *Matern52) SampleFrequencies(rng *rand.Rand, m int) *mat.Dense {
	d := k.Dim()
	w := mat.NewDense(m, d, nil)
	raw := w.RawMatrix()
	for r := 0; r < m; r++ {
		var u float64
		for j := 0; j < 5; j++ {
			z := rng.NormFloat64()
			u += z * z
		}
		s := math.Sqrt(5 / u)
		row := raw.Data[r*raw.Stride : r*raw.Stride+d]
		for i := range row {
			row[i] = rng.NormFloat64() * k.inv[i] * s
		}
	}
	return w
}

// gradXRadial: ∂k/∂x_i = dk/d(r²) · 2 (x_i−y_i)/ℓ_i².
func gradXRadial(k radialKernel, a *ardParams, dst, x, y []float64) float64 {
	v, dk := k.dFromR2(a.r2(x, y))
	for i, w := range a.inv2 {
		dst[i] = 2 * dk * (x[i] - y[i]) * w
	}
	return v
}

// paramGradRadial: ∂k/∂log ℓ_i = dk/d(r²) · (−2 (x_i−y_i)²/ℓ_i²);
// ∂k/∂log σ_s² = k.
func paramGradRadial(k radialKernel, a *ardParams, dst, x, y []float64) float64 {
	v, dk := k.dFromR2(a.r2(x, y))
	for i, w := range a.inv2 {
		t := x[i] - y[i]
		dst[i] = -2 * dk * t * t * w
	}
	dst[len(a.inv2)] = v
	return v
}

// CrossCov returns the cross-covariance matrix K_XY with entries
// k(X_i, Y_j) (rows of X and Y are points). It panics if k is invalid
// (checkKernel) or the column counts differ from k.Dim() (programming
// errors, see the package doc).
func CrossCov(k Kernel, X, Y *mat.Dense) *mat.Dense {
	nx, ny := checkCross("CrossCov", k, X, Y)
	out := mat.NewDense(nx, ny, nil)
	crossCovInto(k, out.RawMatrix().Data, X, Y)
	return out
}

// crossCovGradX returns the Jacobian of K_XY with respect to the query
// points X as d matrices G_c (nx×ny), G_c[i][j] = ∂k(X_i, Y_j)/∂X_ic:
// moving row i of X changes only row i of K_XY, so these hold every
// non-zero derivative. It panics like CrossCov.
func crossCovGradX(k Kernel, X, Y *mat.Dense) []*mat.Dense {
	nx, ny := checkCross("CrossCovGradX", k, X, Y)
	return crossGrads(k.Dim(), nx, ny, func(dst []float64, i, j int) {
		k.GradX(dst, X.RawRowView(i), Y.RawRowView(j))
	})
}

// crossCovParamGrad returns ∂K_XY/∂θ_p for every log-hyper-parameter θ_p,
// in the order of k.Params() (log ℓ_1..log ℓ_d, log σ_s²): d+1 matrices
// nx×ny. It panics like CrossCov.
func crossCovParamGrad(k Kernel, X, Y *mat.Dense) []*mat.Dense {
	nx, ny := checkCross("CrossCovParamGrad", k, X, Y)
	return crossGrads(k.NumParams(), nx, ny, func(dst []float64, i, j int) {
		k.ParamGrad(dst, X.RawRowView(i), Y.RawRowView(j))
	})
}

// checkCross panics on an invalid kernel or inputs of the wrong dimension
// (programming errors, see the package doc) and returns the row counts.
func checkCross(fn string, k Kernel, X, Y *mat.Dense) (nx, ny int) {
	if err := checkKernel(k); err != nil {
		panic("gp: " + fn + ": " + err.Error())
	}
	nx, dx := X.Dims()
	ny, dy := Y.Dims()
	if dx != k.Dim() || dy != k.Dim() {
		panic(fmt.Sprintf("gp: %s: X and Y have %d and %d columns, kernel has dimension %d", fn, dx, dy, k.Dim()))
	}
	return nx, ny
}

// crossGrads scatters the m-vector grad(dst, i, j) of every pair into m
// matrices nx×ny.
func crossGrads(m, nx, ny int, grad func(dst []float64, i, j int)) []*mat.Dense {
	out := make([]*mat.Dense, m)
	for c := range out {
		out[c] = mat.NewDense(nx, ny, nil)
	}
	g := make([]float64, m)
	for i := 0; i < nx; i++ {
		for j := 0; j < ny; j++ {
			grad(g, i, j)
			for c, v := range g {
				out[c].Set(i, j, v)
			}
		}
	}
	return out
}

// crossCovInto writes K_XY row-major (stride ny) into dst.
func crossCovInto(k Kernel, dst []float64, X, Y *mat.Dense) {
	nx, _ := X.Dims()
	ny, _ := Y.Dims()
	for i := 0; i < nx; i++ {
		xi := X.RawRowView(i)
		row := dst[i*ny : (i+1)*ny]
		for j := 0; j < ny; j++ {
			row[j] = k.Eval(xi, Y.RawRowView(j))
		}
	}
}
