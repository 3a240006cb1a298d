package tes

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestMVNCDFClosedForms(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	// Bivariate orthant: 1/4 + asin(ρ)/(2π).
	for _, rho := range []float64{-0.9, -0.3, 0, 0.5, 0.95} {
		p, se := mvnCDF(rng, []float64{1, rho, rho, 1}, 2, []float64{0, 0}, MVNSettings{})
		want := 0.25 + math.Asin(rho)/(2*math.Pi)
		if math.Abs(p-want) > 3*se+1e-12 {
			t.Errorf("ρ=%g: %g ± %g, want %g", rho, p, se, want)
		}
	}
	// Trivariate orthant: 1/8 + Σ asin(ρ_ij)/(4π).
	r12, r13, r23 := 0.3, -0.2, 0.6
	p, se := mvnCDF(rng, []float64{1, r12, r13, r12, 1, r23, r13, r23, 1}, 3, []float64{0, 0, 0}, MVNSettings{AbsTol: 1e-6, RelTol: 1e-6, MaxPoints: 1 << 14})
	want := 0.125 + (math.Asin(r12)+math.Asin(r13)+math.Asin(r23))/(4*math.Pi)
	if math.Abs(p-want) > 3*se+1e-9 || se > 1e-4 {
		t.Errorf("trivariate: %g ± %g, want %g", p, se, want)
	}
	// Equicorrelated ρ = 1/2 orthant in n dims: exactly 1/(n+1) (this is the
	// maximizer probability of n+1 i.i.d. values). n = 49 is |X*| = 50.
	for _, n := range []int{4, 20, 49} {
		sig := make([]float64, n*n)
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				sig[i*n+j] = 0.5
			}
			sig[i*n+i] = 1
		}
		p, se := mvnCDF(rng, sig, n, make([]float64, n), MVNSettings{RelTol: 0.01, MaxPoints: 1 << 13})
		want := 1 / float64(n+1)
		if math.Abs(p-want) > 3*se+1e-9 || 3*se > 0.02*want+1e-4 {
			t.Errorf("equicorrelated n=%d: %g ± %g, want %g", n, p, se, want)
		}
	}
}

// argmaxFreq returns argmax frequencies of n joint draws of N(m, K). The
// factor is refCholesky's, not the shared jitter policy's: the
// near-duplicate case has a pivot² of ~1e-13, below the policy's floor,
// and its reference must stay close to the exact law (the policy's jitter
// of 1e-10 would blur the pair's difference).
func argmaxFreq(rng *rand.Rand, m []float64, k mat.Symmetric, n int) []float64 {
	d := len(m)
	kt, _ := symData(k)
	l := refCholesky(kt, d)
	cnt := make([]float64, d)
	z := make([]float64, d)
	for s := 0; s < n; s++ {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		best, bv := 0, math.Inf(-1)
		for i := 0; i < d; i++ {
			v := m[i]
			for j := 0; j <= i; j++ {
				v += l[i*d+j] * z[j]
			}
			if v > bv {
				best, bv = i, v
			}
		}
		cnt[best]++
	}
	for i := range cnt {
		cnt[i] /= float64(n)
	}
	return cnt
}

// sePrior returns the GP posterior of f at xs (1-d inputs) under an SE kernel
// given noisy data (xd, yd).
func sePrior(xs, xd, yd []float64, ell, noise float64) ([]float64, *mat.SymDense) {
	kf := func(a, b float64) float64 { return math.Exp(-0.5 * (a - b) * (a - b) / (ell * ell)) }
	n, k := len(xd), len(xs)
	kdd := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			v := kf(xd[i], xd[j])
			if i == j {
				v += noise
			}
			kdd.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(kdd) {
		panic("sePrior: factorization")
	}
	ksd := mat.NewDense(k, n, nil)
	for i := range xs {
		for j := range xd {
			ksd.Set(i, j, kf(xs[i], xd[j]))
		}
	}
	var alpha mat.VecDense
	_ = ch.SolveVecTo(&alpha, mat.NewVecDense(n, yd))
	var tmp mat.Dense
	_ = ch.SolveTo(&tmp, ksd.T())
	mean := make([]float64, k)
	cov := mat.NewSymDense(k, nil)
	for i := 0; i < k; i++ {
		mean[i] = mat.Dot(ksd.RowView(i), &alpha)
		for j := 0; j <= i; j++ {
			v := kf(xs[i], xs[j])
			for l := 0; l < n; l++ {
				v -= ksd.At(i, l) * tmp.At(l, j)
			}
			cov.SetSym(i, j, v)
		}
	}
	return mean, cov
}

func TestMaximizerProbabilitiesVsArgmax(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	cases := []struct {
		name string
		xs   []float64
		n    int
	}{
		{"five", []float64{0.1, 0.3, 0.45, 0.7, 0.9}, 400000},
		// A near-duplicate pair: their difference has variance ~1e-13.
		{"near-duplicate", []float64{0.1, 0.3, 0.3 + 1e-7, 0.7, 0.9}, 400000},
		{"fifty", linspace(0.02, 0.98, 50), 100000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, k := sePrior(tc.xs, []float64{0.2, 0.5, 0.8}, []float64{0.4, 0.9, 0.6}, 0.15, 0.01)
			mp, err := MaximizerProbabilities(rng, m, k, MVNSettings{})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(mp.RawSum-1) > 3*mp.RawSumSE+1e-9 {
				t.Errorf("Σ raw p = %g ± %g, want 1", mp.RawSum, mp.RawSumSE)
			}
			sum := 0.0
			for _, v := range mp.P {
				sum += v
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("normalised probabilities sum to %g", sum)
			}
			freq := argmaxFreq(rng, m, k, tc.n)
			for i := range freq {
				// Binomial SE of the frequency, with the variance floored at
				// that of p = 3/n so that a handful of hits of a very rare
				// x* (Poisson counts) is not flagged.
				pv := math.Max(mp.P[i], 3/float64(tc.n))
				se := math.Sqrt(pv*(1-pv)/float64(tc.n) + mp.SE[i]*mp.SE[i])
				if math.Abs(mp.P[i]-freq[i]) > 3*se+1e-6 {
					t.Errorf("x*_%d: p = %.4g (raw %.4g ± %.3g), argmax frequency %.4g ± %.3g", i, mp.P[i], mp.Raw[i], mp.SE[i], freq[i], se)
				}
			}
		})
	}
}

func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a + (b-a)*float64(i)/float64(n-1)
	}
	return out
}

func BenchmarkMaximizerProbabilities50(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, k := sePrior(linspace(0.02, 0.98, 50), []float64{0.2, 0.5, 0.8}, []float64{0.4, 0.9, 0.6}, 0.15, 0.01)
	for i := 0; i < b.N; i++ {
		if _, err := MaximizerProbabilities(rng, m, k, MVNSettings{}); err != nil {
			b.Fatal(err)
		}
	}
}

// refCholesky returns the lower factor of a + τI (n×n, row-major) by the
// unblocked algorithm with the smallest τ ∈ {0, 1e-12, 1e-10, …} × mean
// diagonal for which every pivot is positive (the factorization this test
// was calibrated with).
func refCholesky(a []float64, n int) []float64 {
	mean := 0.0
	for i := 0; i < n; i++ {
		mean += a[i*n+i] / float64(n)
	}
	l := make([]float64, n*n)
	for tau := 0.0; ; tau = math.Max(100*tau, 1e-12*mean) {
		if unblockedCholesky(l, a, n, tau) {
			return l
		}
	}
}

func unblockedCholesky(l, a []float64, n int, tau float64) bool {
	clear(l)
	for j := 0; j < n; j++ {
		s := a[j*n+j] + tau
		for k := 0; k < j; k++ {
			s -= l[j*n+k] * l[j*n+k]
		}
		if !(s > 0) {
			return false
		}
		l[j*n+j] = math.Sqrt(s)
		inv := 1 / l[j*n+j]
		for i := j + 1; i < n; i++ {
			s := a[i*n+j]
			for k := 0; k < j; k++ {
				s -= l[i*n+k] * l[j*n+k]
			}
			l[i*n+j] = s * inv
		}
	}
	return true
}
