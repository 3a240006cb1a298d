package testfunc

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"sync"
)

// The paper's GP sampled function (§5.1): a zero-mean GP on [0,10]² with SE
// kernel k(x, x') = σ_s² exp(−|x − x'|²/(2ℓ²)), σ_s² = 2, ℓ = 1.
const (
	gpSampleVar  = 2.0
	gpSampleLen  = 1.0
	gpSampleSide = 10.0
)

// Spectral grid of the sample. By Bochner, k(τ) = σ_s² ∫ φ(ω) cos(ω·τ) dω with
// φ = N(0, I/ℓ²), a product of 1-d Gaussians. We replace each 1-d integral by
// the trapezoidal rule on ω_j = jΔ, |ω_j| ≤ W. By Poisson summation the
// untruncated rule reproduces the 1-d kernel periodized with period
// P = 2π/Δ, Σ_m exp(−(τ + mP)²/(2ℓ²)), so for lags |τ| ≤ 10 the periodization
// error is below exp(−(P − 10)²/(2ℓ²)) and the truncation error below the
// Gaussian tail mass 2Φ(−Wℓ). With P = 20 and Wℓ = 8.5 both are < 1e-16
// relative, so the covariance of the random function below equals the SE
// kernel to rounding error on the whole domain (TestGPSampleKernel measures
// it), i.e. the sample is exact, not a Monte-Carlo random-feature
// approximation.
const (
	gpSamplePeriod = 20.0
	gpSampleCutoff = 8.5 / gpSampleLen
)

// gpSample is one draw f(x) = Re Σ_{j=0}^{K} Σ_{k=−K}^{K} c_jk e^{i(ω_j x₁ + ω_k x₂)}
// with c_jk = s_jk (a_jk − i b_jk), a, b ~ N(0,1) independent, and
// s_jk² = σ_s² m_j w_j w_k, w_j = Δ φ₁(ω_j), m_0 = 1 and m_j = 2 for j > 0
// (the half plane j > 0 stands for the mirrored frequencies too). Then
// Cov(f(x), f(y)) = σ_s² Σ_{all j,k} w_j w_k cos(ω_j τ₁ + ω_k τ₂) ≈ k(τ).
type gpSample struct {
	k     int          // K: frequencies run over j = 0..K and k = −K..K
	omega []float64    // ω_j = jΔ for j = 0..K
	w     []float64    // w_j
	c     []complex128 // c_jk, row j (0..K), column k+K
	// f* and its maximizer, found by dense search + local refinement.
	optimum   float64
	maximizer []float64
}

var gpSampleCache = struct {
	sync.Mutex
	m map[uint64]*gpSample
}{m: map[uint64]*gpSample{}}

// GPSample returns the paper's GP sampled function: one fixed draw from a
// zero-mean GP on [0,10]² with SE kernel σ_s² = 2, ℓ₁ = ℓ₂ = 1, selected by
// seed (each seed is a different, reproducible draw). The draw is a dense
// deterministic spectral expansion (1,653 complex Fourier coefficients on a
// regular frequency grid) whose covariance equals the SE kernel to ~1e-16 on
// the domain, so the function is smooth, exact and cheap (a few µs) to
// evaluate anywhere, with an analytic gradient. f* and the maximizer are
// found by a 401×401 grid search refined by projected gradient ascent from
// the best 12 grid peaks, once per seed per process (cached).
func GPSample(seed uint64) *Function {
	gpSampleCache.Lock()
	s, ok := gpSampleCache.m[seed]
	if !ok {
		s = newGPSample(seed)
		gpSampleCache.m[seed] = s
	}
	gpSampleCache.Unlock()
	return &Function{
		Name:       "gpsample",
		Dim:        2,
		Lower:      []float64{0, 0},
		Upper:      []float64{gpSampleSide, gpSampleSide},
		Optimum:    s.optimum,
		Maximizers: [][]float64{append([]float64(nil), s.maximizer...)},
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return s.value(x, nil) },
		grad:       s.value,
	}
}

func newGPSample(seed uint64) *gpSample {
	s := drawGPSample(seed)
	s.optimum, s.maximizer = s.search()
	return s
}

// drawGPSample draws the coefficients c_jk for seed (without searching f*).
func drawGPSample(seed uint64) *gpSample {
	delta := 2 * math.Pi / gpSamplePeriod
	K := int(math.Ceil(gpSampleCutoff / delta))
	s := &gpSample{k: K, omega: make([]float64, K+1), w: make([]float64, K+1)}
	for j := 0; j <= K; j++ {
		om := float64(j) * delta
		s.omega[j] = om
		// Δ times the N(0, 1/ℓ²) density at ω.
		s.w[j] = delta * gpSampleLen / math.Sqrt(2*math.Pi) * math.Exp(-0.5*om*om*gpSampleLen*gpSampleLen)
	}
	rng := rand.New(rand.NewPCG(seed, 0x6770_7361_6d70_6c65)) // "gpsample"
	n := 2*K + 1
	s.c = make([]complex128, (K+1)*n)
	for j := 0; j <= K; j++ {
		m := 2.0
		if j == 0 {
			m = 1
		}
		for k := -K; k <= K; k++ {
			sd := math.Sqrt(gpSampleVar * m * s.w[j] * s.w[abs(k)])
			a, b := rng.NormFloat64(), rng.NormFloat64()
			s.c[j*n+k+K] = complex(sd*a, -sd*b)
		}
	}
	return s
}

// cis returns e^{iθ}.
func cis(theta float64) complex128 {
	s, c := math.Sincos(theta)
	return complex(c, s)
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

// value returns f(x) and, if dst != nil, writes ∇f(x) into it.
func (s *gpSample) value(x, dst []float64) float64 {
	K, n := s.k, 2*s.k+1
	var ubuf, vbuf [64]complex128
	u, v := ubuf[:0], vbuf[:0]
	if K+1 > len(ubuf) {
		u, v = make([]complex128, 0, K+1), make([]complex128, 0, K+1)
	}
	for j := 0; j <= K; j++ {
		u = append(u, cis(s.omega[j]*x[0]))
		v = append(v, cis(s.omega[j]*x[1]))
	}
	var f, g1, g2 float64
	for k := -K; k <= K; k++ {
		var a, b complex128 // Σ_j c_jk u_j and Σ_j c_jk iω_j u_j
		if dst == nil {
			for j := 0; j <= K; j++ {
				a += s.c[j*n+k+K] * u[j]
			}
		} else {
			for j := 0; j <= K; j++ {
				t := s.c[j*n+k+K] * u[j]
				a += t
				b += complex(-s.omega[j]*imag(t), s.omega[j]*real(t)) // iω_j t
			}
		}
		vk := v[abs(k)]
		om := s.omega[abs(k)]
		if k < 0 {
			vk = cmplx.Conj(vk)
			om = -om
		}
		av := a * vk
		f += real(av)
		g1 += real(b * vk)
		g2 -= om * imag(av) // Re(iω a v) = −ω Im(a v)
	}
	if dst != nil {
		dst[0], dst[1] = g1, g2
	}
	return f
}

// cov returns the exact covariance of the expansion at lag τ,
// σ_s² Σ_{all j,k} w_j w_k cos(ω_j τ₁ + ω_k τ₂) = σ_s² C(τ₁) C(τ₂) with
// C(τ) = Σ_j w_j cos(ω_j τ) (the sine sums vanish by symmetry).
func (s *gpSample) cov(t1, t2 float64) float64 {
	c := func(t float64) float64 {
		sum := s.w[0]
		for j := 1; j <= s.k; j++ {
			sum += 2 * s.w[j] * math.Cos(s.omega[j]*t)
		}
		return sum
	}
	return gpSampleVar * c(t1) * c(t2)
}

// search finds f* by evaluating f on a 401×401 grid (spacing ℓ/40) through
// the separable form F = Re(U C Vᵀ) and refining the best grid peaks.
func (s *gpSample) search() (float64, []float64) {
	const n = 401
	K, nk := s.k, 2*s.k+1
	xs := linspace(0, gpSampleSide, n)
	// A[a][k] = Σ_j u_j(x_a) c_jk.
	A := make([]complex128, n*nk)
	for a, x := range xs {
		for j := 0; j <= K; j++ {
			uj := cis(s.omega[j] * x)
			row := s.c[j*nk : (j+1)*nk]
			dst := A[a*nk : (a+1)*nk]
			for k := range row {
				dst[k] += row[k] * uj
			}
		}
	}
	// V[b][k] = e^{i ω_k y_b}.
	V := make([]complex128, n*nk)
	for b, y := range xs {
		for k := -K; k <= K; k++ {
			om := s.omega[abs(k)]
			if k < 0 {
				om = -om
			}
			V[b*nk+k+K] = cis(om * y)
		}
	}
	grid := make([][]float64, n)
	for a := range grid {
		grid[a] = make([]float64, n)
		ra := A[a*nk : (a+1)*nk]
		for b := range grid[a] {
			rb := V[b*nk : (b+1)*nk]
			var sum float64
			for k := range ra {
				sum += real(ra[k])*real(rb[k]) - imag(ra[k])*imag(rb[k])
			}
			grid[a][b] = sum
		}
	}
	lo, hi := []float64{0, 0}, []float64{gpSampleSide, gpSampleSide}
	best, bestX := math.Inf(-1), []float64(nil)
	for _, p := range gridPeaks(grid, xs, xs, 12) {
		x, v := refine(s.value, p.x[:], lo, hi)
		if v > best {
			best, bestX = v, x
		}
	}
	return best, bestX
}
