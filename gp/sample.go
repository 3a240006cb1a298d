package gp

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"
)

// sampleJoint returns n joint draws of f at the rows of X (q×d) from the
// posterior N(mean, cov) of Joint, one draw per row of the n×q result:
// f = mean + L_C z with L_C the Cholesky factor of cov (jitter escalation,
// see minJitter). If cov is numerically indefinite even with maximal jitter
// (it is PSD in exact arithmetic), the symmetric square root from an
// eigendecomposition with negative eigenvalues clamped to 0 is used instead.
//
// It returns nil for n ≤ 0 (gonum has no empty matrices).
func (g *GP) sampleJoint(rng *rand.Rand, X *mat.Dense, n int) *mat.Dense {
	if n <= 0 {
		return nil
	}
	q, _ := X.Dims()
	mean, cov := g.Joint(X)
	root := covRoot(cov)
	out := mat.NewDense(n, q, nil)
	z := make([]float64, q)
	for s := 0; s < n; s++ {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		row := out.RawRowView(s)
		for i := 0; i < q; i++ {
			row[i] = mean[i] + dot(root[i*q:(i+1)*q], z)
		}
	}
	return out
}

// covRoot returns R (q×q row-major) with R Rᵀ ≈ cov.
func covRoot(cov *mat.SymDense) []float64 {
	q := cov.SymmetricDim()
	a := make([]float64, q*q)
	for i := 0; i < q; i++ {
		for j := 0; j < q; j++ {
			a[i*q+j] = cov.At(i, j)
		}
	}
	if c, err := choleskyJitter(a, q); err == nil {
		return c.l
	}
	var eig mat.EigenSym
	root := make([]float64, q*q)
	if !eig.Factorize(cov, true) {
		// Last resort: independent marginals.
		for i := 0; i < q; i++ {
			root[i*q+i] = math.Sqrt(math.Max(cov.At(i, i), 0))
		}
		return root
	}
	vals := eig.Values(nil)
	var vecs mat.Dense
	eig.VectorsTo(&vecs)
	for i := 0; i < q; i++ {
		for j := 0; j < q; j++ {
			root[i*q+j] = vecs.At(i, j) * math.Sqrt(math.Max(vals[j], 0))
		}
	}
	return root
}

// Path is one approximate posterior sample of the whole function f, drawn
// by pathwise (decoupled) conditioning (Wilson et al., 2020):
//
//	f(x) = Σ_j w_j cos(ω_jᵀx + b_j) + Σ_l v_l k(x, X_l),
//	v = (K_DD + σ_n² I)⁻¹ (y − f_prior(X) − ε),
//
// where the first sum is a random-Fourier-feature prior draw f_prior and ε
// ~ N(0, σ_n² I). A Path is deterministic, costs O(m d + n d) per
// evaluation (m features, n observations) and is safe for concurrent use.
type Path struct {
	k     Kernel
	rk    radialKernel
	d, m  int
	omega []float64 // m×d
	phase []float64 // m
	w     []float64 // m, includes the factor sqrt(2σ_s²/m)
	pts   pointSet
	v     []float64 // n
	// mixed kernels: the per-choice phases of every feature
	// (Mixed.sampleChoicePhases), added to the features' arguments.
	mixed  *Mixed
	choice []float64
}

// choiceOffsets returns, for a path of a mixed kernel, the offset of x's
// choice of each categorical coordinate within a feature's block of
// phases (nil for other kernels); shift then needs no binning per feature.
func (p *Path) choiceOffsets(stack []int, x []float64) []int {
	if p.mixed == nil {
		return nil
	}
	offs := stack[:0]
	o := 0
	for i, n := range p.mixed.cats {
		if n > 0 {
			offs = append(offs, o+Bin(x[i], n))
			o += n
		}
	}
	return offs
}

// shift returns feature j's categorical phase Σ_t Ω_t[c_t(x)] given x's
// choiceOffsets (0 for other kernels).
func (p *Path) shift(j int, offs []int) float64 {
	if p.mixed == nil {
		return 0
	}
	ph := p.choice[j*p.mixed.nChoices:]
	var s float64
	for _, o := range offs {
		s += ph[o]
	}
	return s
}

// MaxPathPhaseBytes bounds the random phases SamplePaths draws for a
// kernel with categorical factors (Mixed): one per feature and choice of
// every path, 8 bytes each. A space of 65,536 choices with 1000 features
// needs 0.5 GB per path; 20 paths would be 10 GB.
const MaxPathPhaseBytes = 2e9

// SamplePaths draws n approximate whole-function posterior samples with
// `features` random Fourier features each (see Path and the package doc
// for why pathwise conditioning is used). Each path gets its own
// frequencies, so across paths the mean and covariance of f at any finite
// set of points equal the exact posterior's; a single path is a rank-m
// approximation of a GP draw.
func (g *GP) SamplePaths(rng *rand.Rand, n, features int) ([]*Path, error) {
	if n < 0 || features < 1 {
		return nil, fmt.Errorf("gp.SamplePaths: need n ≥ 0 paths and features ≥ 1 (got %d, %d): %w", n, features, errBadInput)
	}
	if rng == nil {
		return nil, fmt.Errorf("gp.SamplePaths: nil random source: %w", errBadInput)
	}
	if mk, ok := g.k.(*Mixed); ok && float64(n)*float64(features)*float64(mk.nChoices)*8 > MaxPathPhaseBytes {
		return nil, fmt.Errorf("gp.SamplePaths: %d paths × %d features × %d categorical choices need %.3g GB of random phases, more than the %.3g GB allowed (MaxPathPhaseBytes): use fewer choices, fewer trusted maximizers or an acquisition without path samples (ei): %w",
			n, features, mk.nChoices, float64(n)*float64(features)*float64(mk.nChoices)*8/1e9, MaxPathPhaseBytes/1e9, errBadInput)
	}
	paths := make([]*Path, n)
	d, nd := g.d, g.n
	// ε has the variance the factor was built with (noise + jitter), so v
	// is exactly the pathwise update of the factorized model.
	epsSD := math.Sqrt(g.noise + g.chol.jitter)
	scale := math.Sqrt(2 * g.k.Variance() / float64(features))
	for p := range paths {
		om := g.k.SampleFrequencies(rng, features)
		path := &Path{
			k: g.k, rk: g.rk, d: d, m: features,
			omega: om.RawMatrix().Data,
			phase: make([]float64, features),
			w:     make([]float64, features),
			pts:   pointSet{x: g.x, xs: g.xs, n: nd},
		}
		if r := om.RawMatrix(); r.Stride != d {
			path.omega = mat.DenseCopyOf(om).RawMatrix().Data
		}
		if mk, ok := g.k.(*Mixed); ok {
			path.mixed, path.choice = mk, mk.sampleChoicePhases(rng, features)
		}
		for j := 0; j < features; j++ {
			path.phase[j] = 2 * math.Pi * rng.Float64()
			path.w[j] = scale * rng.NormFloat64()
		}
		v := make([]float64, nd)
		for l := range v {
			v[l] = epsSD * rng.NormFloat64()
		}
		path.updateTargets(v, g)
		g.chol.solveVec(v)
		path.v = v
		if !finite(v) {
			return nil, errors.New("gp.SamplePaths: non-finite pathwise update (ill-conditioned GP)")
		}
		paths[p] = path
	}
	return paths, nil
}

// prior evaluates the RFF prior draw Σ_j w_j cos(ω_jᵀx + b_j).
func (p *Path) prior(x []float64) float64 {
	var f float64
	d := p.d
	var stack [16]int
	offs := p.choiceOffsets(stack[:], x)
	for j := 0; j < p.m; j++ {
		f += p.w[j] * math.Cos(dot(p.omega[j*d:j*d+d], x)+p.phase[j]+p.shift(j, offs))
	}
	return f
}

// Eval returns the sampled function's value f(x).
func (p *Path) Eval(x []float64) float64 {
	f := p.prior(x)
	if p.rk != nil {
		var stack [16]float64
		var sx []float64
		if p.d <= len(stack) {
			sx = stack[:p.d]
		} else {
			sx = make([]float64, p.d)
		}
		for i, w := range p.rk.invLengths() {
			sx[i] = x[i] * w
		}
		xs := p.pts.xs
		for l, vl := range p.v {
			f += vl * p.rk.fromR2(sqDist(sx, xs[l*p.d:(l+1)*p.d]))
		}
		return f
	}
	for l, vl := range p.v {
		f += vl * p.k.Eval(x, p.pts.x.RawRowView(l))
	}
	return f
}

// Grad writes ∇f(x) into dst (len d) and returns f(x).
func (p *Path) Grad(x, dst []float64) float64 {
	d := p.d
	clear(dst[:d])
	var f float64
	var stack [16]int
	offs := p.choiceOffsets(stack[:], x)
	for j := 0; j < p.m; j++ {
		om := p.omega[j*d : j*d+d]
		a := dot(om, x) + p.phase[j] + p.shift(j, offs)
		s, c := math.Sincos(a)
		f += p.w[j] * c
		ws := -p.w[j] * s
		for i := range om {
			dst[i] += ws * om[i]
		}
	}
	var sx []float64
	if p.rk != nil {
		sx = make([]float64, d)
		for i, w := range p.rk.invLengths() {
			sx[i] = x[i] * w
		}
		for l, vl := range p.v {
			f += vl * p.rk.fromR2(sqDist(sx, p.pts.xs[l*d:(l+1)*d]))
		}
	} else {
		for l, vl := range p.v {
			f += vl * p.k.Eval(x, p.pts.x.RawRowView(l))
		}
	}
	weightedGrad(p.k, dst, x, sx, p.pts, p.v, make([]float64, d))
	return f
}

// Dim returns the input dimension.
func (p *Path) Dim() int { return p.d }

// Categories returns the choice counts per coordinate of a path drawn with
// a Mixed kernel (Mixed.Categories), else nil.
func (p *Path) Categories() []int {
	if p.mixed == nil {
		return nil
	}
	return p.mixed.Categories()
}

// pathUpdateChunk is the number of observations per goroutine when
// updateTargets evaluates a path's prior draw at the data (m cosines per
// observation: 2M at n = 2000 with 1024 features, the bulk of drawing a
// path at that size).
const pathUpdateChunk = 256

// updateTargets overwrites eps (the noise draws ε_l) with the pathwise
// update's right-hand side y_l − f_prior(x_l) − ε_l. The observations are
// split into chunks evaluated on up to GOMAXPROCS goroutines; each entry's
// arithmetic is the same whichever goroutine computes it, so the result
// does not depend on the number of threads.
func (p *Path) updateTargets(eps []float64, g *GP) {
	body := func(lo, hi int) {
		for l := lo; l < hi; l++ {
			eps[l] = g.y[l] - p.prior(g.x.RawRowView(l)) - eps[l]
		}
	}
	n := len(eps)
	workers := min(runtime.GOMAXPROCS(0), (n+pathUpdateChunk-1)/pathUpdateChunk)
	if workers <= 1 {
		body(0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(pathUpdateChunk)) - pathUpdateChunk
				if lo >= n {
					return
				}
				body(lo, min(lo+pathUpdateChunk, n))
			}
		})
	}
	wg.Wait()
}
