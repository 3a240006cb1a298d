package gp

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

// GP is the exact posterior of a zero-mean Gaussian process given noisy
// observations y = f(X) + ε, ε ~ N(0, σ_n² I) (paper §3). Inputs are rows of
// X, in the unit cube by convention; y are standardized outputs.
//
// A GP holds the Cholesky factor L of K_DD + σ_n² I (+ jitter, see
// minJitter) and α = (K_DD + σ_n² I)⁻¹ y, so a posterior mean costs O(n d)
// and a variance O(n²). It is immutable after construction and safe for
// concurrent reads.
type GP struct {
	k     Kernel
	rk    radialKernel // k, if it is one of this package's kernels
	noise float64
	x     *mat.Dense
	xs    []float64 // X scaled by 1/ℓ, n×d row-major (only if rk != nil)
	y     []float64
	n, d  int
	chol  *cholFactor
	alpha []float64
	lml   float64

	pool sync.Pool // *predictBuf
}

// errBadInput is wrapped by errors about invalid user data (NaN/Inf values,
// mismatched sizes, negative variances).
var errBadInput = errors.New("invalid input")

// New returns the GP posterior for kernel k, noise variance noiseVar ≥ 0
// (σ_n², standardized output units) and observations y at the rows of X
// (n×d, n ≥ 1, d = k.Dim()). X and y are copied.
//
// K_DD + σ_n² I is factorized by Cholesky with jitter escalation; an error
// wrapping errNotPositiveDefinite is returned if it fails even with the
// maximal jitter, and one wrapping errBadInput for an invalid kernel
// (checkKernel), NaN/Inf or mismatched data.
//
// Constant outputs are fine: with y = 0 (what standardization makes of a
// constant objective) α = 0, the posterior mean is 0 everywhere, the
// variances are the usual data-independent ones and the log marginal
// likelihood is −½ log|K_DD+σ_n²I| − (n/2) log 2π; K_DD + σ_n² I does not
// depend on y, so nothing becomes singular.
func New(k Kernel, noiseVar float64, X *mat.Dense, y []float64) (*GP, error) {
	if err := checkKernel(k); err != nil {
		return nil, fmt.Errorf("gp.New: %w", err)
	}
	if X == nil {
		return nil, fmt.Errorf("gp.New: nil inputs X (need at least one observation): %w", errBadInput)
	}
	n, d := X.Dims()
	if d != k.Dim() {
		return nil, fmt.Errorf("gp.New: X has %d columns but the kernel has dimension %d: %w", d, k.Dim(), errBadInput)
	}
	if len(y) != n {
		return nil, fmt.Errorf("gp.New: %d inputs but %d outputs: %w", n, len(y), errBadInput)
	}
	if math.IsNaN(noiseVar) || math.IsInf(noiseVar, 0) || noiseVar < 0 {
		return nil, fmt.Errorf("gp.New: noise variance %v must be finite and ≥ 0: %w", noiseVar, errBadInput)
	}
	if err := checkFiniteDense(X, "X"); err != nil {
		return nil, fmt.Errorf("gp.New: %w", err)
	}
	if err := checkFiniteVec(y, "y"); err != nil {
		return nil, fmt.Errorf("gp.New: %w", err)
	}
	g := newShell(k, noiseVar, mat.DenseCopyOf(X), append([]float64(nil), y...))
	K := g.kernelMatrix()
	for i := 0; i < n; i++ {
		K[i*n+i] += noiseVar
	}
	c, err := choleskyJitter(K, n)
	if err != nil {
		return nil, fmt.Errorf("gp.New: factorize K+σ²I (n=%d, noise %.3g): %w", n, noiseVar, err)
	}
	g.setFactor(c)
	return g, nil
}

// newShell fills the fields that do not depend on the factorization.
func newShell(k Kernel, noiseVar float64, X *mat.Dense, y []float64) *GP {
	n, d := X.Dims()
	g := &GP{k: k, noise: noiseVar, x: X, y: y, n: n, d: d}
	if rk, ok := k.(radialKernel); ok {
		g.rk = rk
		g.xs = scaleRows(X, rk.invLengths())
	}
	return g
}

// setFactor stores the factor and derives α and the log marginal likelihood.
func (g *GP) setFactor(c *cholFactor) {
	g.chol = c
	g.alpha = append([]float64(nil), g.y...)
	c.solveVec(g.alpha)
	var yAy float64
	for i, a := range g.alpha {
		yAy += a * g.y[i]
	}
	g.lml = -0.5*yAy - 0.5*c.logDet() - 0.5*float64(g.n)*math.Log(2*math.Pi)
}

// kernelMatrix returns K_DD (n×n row-major, both triangles).
func (g *GP) kernelMatrix() []float64 {
	n := g.n
	K := make([]float64, n*n)
	for i := 0; i < n; i++ {
		g.kRowRange(K[i*n:i*n+i+1], g.scaledRowD(i), g.x.RawRowView(i), 0, i+1)
	}
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			K[j*n+i] = K[i*n+j]
		}
	}
	return K
}

// Kernel returns the covariance function.
func (g *GP) Kernel() Kernel { return g.k }

// NoiseVar returns σ_n², the observation noise variance.
func (g *GP) NoiseVar() float64 { return g.noise }

// Jitter returns the extra diagonal term that the Cholesky factorization of
// K_DD + σ_n² I needed (0 in the well-conditioned case); it acts as extra
// noise variance.
func (g *GP) Jitter() float64 { return g.chol.jitter }

// X returns the training inputs (n×d, one point per row). Do not modify.
func (g *GP) X() *mat.Dense { return g.x }

// Y returns the training outputs. Do not modify.
func (g *GP) Y() []float64 { return g.y }

// N returns the number of observations.
func (g *GP) N() int { return g.n }

// Dim returns the input dimension d.
func (g *GP) Dim() int { return g.d }

// Alpha returns α = (K_DD + σ_n² I)⁻¹ y. Do not modify.
func (g *GP) Alpha() []float64 { return g.alpha }

// logMarginalLikelihood returns log p(y | X, θ) =
// −½ yᵀ(K+σ_n²I)⁻¹y − ½ log|K+σ_n²I| − (n/2) log 2π.
func (g *GP) logMarginalLikelihood() float64 { return g.lml }

// scaledRowD returns row i of X scaled by 1/ℓ (nil without a radial kernel).
func (g *GP) scaledRowD(i int) []float64 {
	if g.rk == nil {
		return nil
	}
	return g.xs[i*g.d : (i+1)*g.d]
}

// scaleInto writes x ⊙ (1/ℓ) into dst (only with a radial kernel).
func (g *GP) scaleInto(dst, x []float64) []float64 {
	if g.rk == nil {
		return nil
	}
	for i, w := range g.rk.invLengths() {
		dst[i] = x[i] * w
	}
	return dst[:g.d]
}

// rowKernel is a kernel that fills a covariance row k(x, X_j), j in
// [lo, hi), faster than one Eval per pair, with the same bits as Eval
// (Mixed bins x once for the whole row).
type rowKernel interface {
	row(dst, x []float64, X *mat.Dense, lo, hi int)
}

// kRowRange writes k(x, X_j) for j in [lo, hi) into dst (len hi−lo). sx is
// x scaled by 1/ℓ (used if the kernel is radial).
func (g *GP) kRowRange(dst, sx, x []float64, lo, hi int) {
	if g.rk != nil {
		radialRow(g.rk, dst, sx, g.xs[lo*g.d:hi*g.d], g.d)
		return
	}
	if rk, ok := g.k.(rowKernel); ok {
		rk.row(dst, x, g.x, lo, hi)
		return
	}
	for j := lo; j < hi; j++ {
		dst[j-lo] = g.k.Eval(x, g.x.RawRowView(j))
	}
}

// radialRow writes k(r²(sx, row j of xs)) for each row of xs (row-major, d
// columns) into dst. The type switch keeps the inner loop free of interface
// calls for this package's kernels.
func radialRow(k radialKernel, dst, sx, xs []float64, d int) {
	m := len(xs) / d
	switch kk := k.(type) {
	case *SE:
		s2 := kk.s2
		for j := 0; j < m; j++ {
			dst[j] = s2 * math.Exp(-0.5*sqDist(sx, xs[j*d:j*d+d]))
		}
	case *Matern52:
		s2 := kk.s2
		for j := 0; j < m; j++ {
			r2 := sqDist(sx, xs[j*d:j*d+d])
			r := math.Sqrt(r2)
			dst[j] = s2 * (1 + sqrt5*r + 5.0/3.0*r2) * math.Exp(-sqrt5*r)
		}
	default:
		for j := 0; j < m; j++ {
			dst[j] = k.fromR2(sqDist(sx, xs[j*d:j*d+d]))
		}
	}
}

func sqDist(a, b []float64) float64 {
	b = b[:len(a)]
	var s float64
	for i, v := range a {
		t := v - b[i]
		s += t * t
	}
	return s
}

func scaleRows(X *mat.Dense, w []float64) []float64 {
	n, d := X.Dims()
	out := make([]float64, n*d)
	for i := 0; i < n; i++ {
		row := X.RawRowView(i)
		for j := 0; j < d; j++ {
			out[i*d+j] = row[j] * w[j]
		}
	}
	return out
}

// MeanVar returns the posterior mean μ_x and variance σ_x² of f(x), Eq. (1):
//
//	μ_x = K_xD (K_DD + σ_n² I)⁻¹ y,  σ_x² = k_xx − K_xD (K_DD + σ_n² I)⁻¹ K_Dx.
//
// The variance of the noisy y_x is σ_x² + NoiseVar(). σ_x² is clamped at 0:
// round-off can make it slightly negative at training inputs of a nearly
// noise-free model, where the true value is ≈ 0.
func (g *GP) MeanVar(x []float64) (mean, variance float64) {
	if len(x) != g.d {
		panic(fmt.Sprintf("gp: MeanVar: x has length %d, GP has dimension %d", len(x), g.d))
	}
	buf := g.getBuf()
	defer g.pool.Put(buf)
	k := buf.kb[:g.n]
	g.kRowRange(k, g.scaleInto(buf.sx, x), x, 0, g.n)
	mean = dot(k, g.alpha)
	g.chol.halfSolveVec(k)
	return mean, math.Max(g.k.Variance()-dot(k, k), 0)
}

// meanVarY returns the posterior predictive mean and variance of a noisy
// observation y_x = f(x) + ε, ε ~ N(0, σ_n²) independent of the data's
// noise: μ_x and σ_x² + NoiseVar() (MeanVar plus the noise). The jitter
// (Jitter()) is a numerical device of the factorization, not part of the
// observation model, and is not added.
func (g *GP) meanVarY(x []float64) (mean, variance float64) {
	m, v := g.MeanVar(x)
	return m, v + g.noise
}

// predictY is Predict for noisy observations y = f + ε: the same means,
// variances plus NoiseVar() (see MeanVarY).
func (g *GP) predictY(X *mat.Dense, mean, variance []float64) {
	g.Predict(X, mean, variance)
	for i := range variance {
		variance[i] += g.noise
	}
}

// jointY returns the joint posterior predictive of noisy observations y_X
// = f(X) + ε at the rows of X (q×d), each row with its own independent
// noise (two rows at the same input are two observations): Joint's mean and
// covariance plus NoiseVar()·I.
func (g *GP) jointY(X *mat.Dense) (mean []float64, cov *mat.SymDense) {
	mean, cov = g.Joint(X)
	for i := 0; i < cov.SymmetricDim(); i++ {
		cov.SetSym(i, i, cov.At(i, i)+g.noise)
	}
	return mean, cov
}

// predictBlock is the number of query rows processed per block by Predict:
// the block of cross-covariances (predictBlock×n) stays in cache for the
// triangular solve.
const predictBlock = 64

type predictBuf struct {
	kb  []float64 // predictBlock × n
	kt  []float64 // n × predictBlock (Predict's transposed block)
	acc []float64 // 4 × predictBlock (partial sums of squares)
	sx  []float64 // d
	tmp []float64 // d
}

func (g *GP) getBuf() *predictBuf {
	if b, ok := g.pool.Get().(*predictBuf); ok {
		return b
	}
	return &predictBuf{
		kb: make([]float64, predictBlock*g.n), kt: make([]float64, predictBlock*g.n),
		acc: make([]float64, 4*predictBlock), sx: make([]float64, g.d), tmp: make([]float64, g.d),
	}
}

// Predict writes the posterior mean and variance of f at each row of X
// (q×d) into mean and variance (len q each; either may be nil to skip it).
// Same formulas and clamping as MeanVar, computed in blocks of predictBlock
// queries with one blocked triangular solve per block (see the package
// doc, Costs), the blocks spread over GOMAXPROCS goroutines. A query's
// result does not depend on the batch it is in or on its position there;
// it agrees with MeanVar to rounding. Safe for concurrent use.
func (g *GP) Predict(X *mat.Dense, mean, variance []float64) {
	q, d := X.Dims()
	if d != g.d {
		panic(fmt.Sprintf("gp: Predict: X has %d columns, GP has dimension %d", d, g.d))
	}
	if (mean != nil && len(mean) != q) || (variance != nil && len(variance) != q) {
		panic("gp: Predict: output slices must have one entry per row of X")
	}
	blocks := (q + predictBlock - 1) / predictBlock
	workers := min(runtime.GOMAXPROCS(0), blocks)
	if workers <= 1 {
		g.predictBlocks(X, mean, variance, 0, q)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := int(next.Add(1) - 1); b < blocks; b = int(next.Add(1) - 1) {
				lo := b * predictBlock
				g.predictBlocks(X, mean, variance, lo, min(lo+predictBlock, q))
			}
		}()
	}
	wg.Wait()
}

// predictBlocks is Predict for the rows from..to-1 of X.
func (g *GP) predictBlocks(X *mat.Dense, mean, variance []float64, from, to int) {
	buf := g.getBuf()
	defer g.pool.Put(buf)
	n := g.n
	s2 := g.k.Variance()
	for lo := from; lo < to; lo += predictBlock {
		hi := min(lo+predictBlock, to)
		kb := buf.kb[:(hi-lo)*n]
		for i := lo; i < hi; i++ {
			x := X.RawRowView(i)
			row := kb[(i-lo)*n : (i-lo+1)*n]
			g.kRowRange(row, g.scaleInto(buf.sx, x), x, 0, n)
			if mean != nil {
				mean[i] = dot(row, g.alpha)
			}
		}
		if variance == nil {
			continue
		}
		// Columns of kt ← L⁻¹ k_Dx; σ² = k_xx − ‖L⁻¹ k_Dx‖².
		m := hi - lo
		kt := buf.kt[:n*m]
		for i := 0; i < m; i++ {
			for j, v := range kb[i*n : (i+1)*n] {
				kt[j*m+i] = v
			}
		}
		g.chol.halfSolveCols(kt, m)
		sumSquaresCols(buf.acc[:4*m], kt, n, m)
		for i := 0; i < m; i++ {
			variance[lo+i] = math.Max(s2-buf.acc[i], 0)
		}
	}
}

// sumSquaresCols writes Σ_j B_ji² for each column i of the n×m row-major B
// into acc[:m] (acc has len 4m; acc[m:] is scratch). The sum is ordered as
// dot(col, col) orders it: four partial sums over j mod 4, the tail in the
// first, combined as (s0+s1)+(s2+s3).
func sumSquaresCols(acc, b []float64, n, m int) {
	s0, s1, s2, s3 := acc[:m], acc[m:2*m], acc[2*m:3*m], acc[3*m:4*m]
	clear(acc[:4*m])
	j := 0
	for ; j+4 <= n; j += 4 {
		r0, r1, r2, r3 := b[j*m:(j+1)*m], b[(j+1)*m:(j+2)*m], b[(j+2)*m:(j+3)*m], b[(j+3)*m:(j+4)*m]
		for i := range s0 {
			s0[i] += r0[i] * r0[i]
			s1[i] += r1[i] * r1[i]
			s2[i] += r2[i] * r2[i]
			s3[i] += r3[i] * r3[i]
		}
	}
	for ; j < n; j++ {
		for i, v := range b[j*m : (j+1)*m] {
			s0[i] += v * v
		}
	}
	for i := range s0 {
		s0[i] = (s0[i] + s1[i]) + (s2[i] + s3[i])
	}
}

// dot returns aᵀb.
func dot(a, b []float64) float64 { return linalg.Dot(a, b) }

// crossD returns K_XD (q×n row-major) for the rows of X.
func (g *GP) crossD(X *mat.Dense) []float64 {
	q, _ := X.Dims()
	n := g.n
	out := make([]float64, q*n)
	sx := make([]float64, g.d)
	for i := 0; i < q; i++ {
		x := X.RawRowView(i)
		g.kRowRange(out[i*n:(i+1)*n], g.scaleInto(sx, x), x, 0, n)
	}
	return out
}

// Joint returns the joint posterior of f at the rows of X (q×d): mean
// K_XD α and covariance K_XX − K_XD (K_DD + σ_n² I)⁻¹ K_DX (Eq. (1) for a
// set). The diagonal is clamped at 0 (see MeanVar). Add NoiseVar()·I for
// the noisy y_X.
func (g *GP) Joint(X *mat.Dense) (mean []float64, cov *mat.SymDense) {
	q, d := X.Dims()
	if d != g.d {
		panic(fmt.Sprintf("gp: Joint: X has %d columns, GP has dimension %d", d, g.d))
	}
	n := g.n
	kx := g.crossD(X)
	mean = make([]float64, q)
	for i := range mean {
		mean[i] = dot(kx[i*n:(i+1)*n], g.alpha)
	}
	g.chol.rightSolveT(kx, q)
	cov = mat.NewSymDense(q, nil)
	raw := cov.RawSymmetric()
	for i := 0; i < q; i++ {
		xi := X.RawRowView(i)
		for j := i; j < q; j++ {
			raw.Data[i*raw.Stride+j] = g.k.Eval(xi, X.RawRowView(j))
		}
	}
	// cov ← K_XX − V Vᵀ with V = K_XD L⁻ᵀ.
	blas64.Syrk(blas.NoTrans, -1, blas64.General{Rows: q, Cols: n, Stride: n, Data: kx}, 1, raw)
	for i := 0; i < q; i++ {
		if raw.Data[i*raw.Stride+i] < 0 {
			raw.Data[i*raw.Stride+i] = 0
		}
	}
	return mean, cov
}

func checkFiniteDense(X *mat.Dense, name string) error {
	r, c := X.Dims()
	for i := 0; i < r; i++ {
		for j, v := range X.RawRowView(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s[%d][%d] = %v: %w", name, i, j, v, errBadInput)
			}
		}
	}
	_ = c
	return nil
}

func checkFiniteVec(y []float64, name string) error {
	for i, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s[%d] = %v: %w", name, i, v, errBadInput)
		}
	}
	return nil
}
