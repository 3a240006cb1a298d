package tes

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// truncatedBivariate returns the exact mean and covariance of N(m, K) (2-d)
// truncated to f0 ≥ f1, via the truncated moments of d = f0 − f1 computed
// by quadrature (independent of truncMoments) and the linear regression of
// f on d (Fig. 2 of the paper).
func truncatedBivariate(m []float64, k *mat.SymDense) ([]float64, *mat.SymDense) {
	c := []float64{1, -1}
	kc := []float64{k.At(0, 0) - k.At(0, 1), k.At(1, 0) - k.At(1, 1)}
	md := m[0] - m[1]
	vd := kc[0] - kc[1]
	sd := math.Sqrt(vd)
	lam, v := truncMomentsQuad(md / sd)
	ed := md + sd*lam
	vard := vd * v
	mean := make([]float64, 2)
	cov := mat.NewSymDense(2, nil)
	for i := 0; i < 2; i++ {
		mean[i] = m[i] + kc[i]*(ed-md)/vd
		for j := 0; j <= i; j++ {
			cov.SetSym(i, j, k.At(i, j)-kc[i]*kc[j]/vd+kc[i]*kc[j]*vard/(vd*vd))
		}
	}
	_ = c
	return mean, cov
}

func TestEPBivariateExact(t *testing.T) {
	cases := []struct {
		name string
		m    []float64
		k    []float64
	}{
		{"standard", []float64{0, 0}, []float64{1, 0, 0, 1}},
		{"correlated", []float64{0.3, -0.2}, []float64{1, 0.8, 0.8, 2}},
		{"unlikely", []float64{-2, 1}, []float64{0.5, 0.1, 0.1, 0.4}},
		{"far tail β≈−30", []float64{-3, 0}, []float64{0.005, 0, 0, 0.005}},
		{"far tail β≈−200", []float64{-20, 0}, []float64{0.005, 0, 0, 0.005}},
		{"likely", []float64{5, 0}, []float64{1, 0.2, 0.2, 1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k := mat.NewSymDense(2, tc.k)
			wantM, wantC := truncatedBivariate(tc.m, k)
			r, err := MaximizerEP(tc.m, k, 0, EPSettings{})
			if err != nil {
				t.Fatal(err)
			}
			if !r.Converged {
				t.Fatalf("EP did not converge in %d sweeps", r.Sweeps)
			}
			for i := 0; i < 2; i++ {
				if d := math.Abs(r.Mean[i] - wantM[i]); d > 1e-8 {
					t.Errorf("mean[%d] = %.12g, exact %.12g (diff %.2g)", i, r.Mean[i], wantM[i], d)
				}
				for j := 0; j < 2; j++ {
					if d := math.Abs(r.Cov.At(i, j) - wantC.At(i, j)); d > 1e-8 {
						t.Errorf("cov[%d,%d] = %.12g, exact %.12g (diff %.2g)", i, j, r.Cov.At(i, j), wantC.At(i, j), d)
					}
				}
			}
			// Damped EP reaches the same fixed point (PAPER-NOTES item 5).
			rd, err := MaximizerEP(tc.m, k, 0, EPSettings{Damping: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if d := math.Abs(rd.Mean[i] - wantM[i]); d > 1e-8 {
					t.Errorf("damped mean[%d] off by %.2g", i, d)
				}
			}
		})
	}
}

// seKernelPrior builds a correlated 5-d Gaussian: an SE-kernel GP on 1-d
// inputs conditioned on two noisy observations.
func seKernelPrior() ([]float64, *mat.SymDense) {
	xs := []float64{0.1, 0.3, 0.45, 0.7, 0.9}
	xd := []float64{0.2, 0.8}
	yd := []float64{0.5, 0.9}
	ell, noise := 0.2, 0.05
	kf := func(a, b float64) float64 { return math.Exp(-0.5 * (a - b) * (a - b) / (ell * ell)) }
	n := len(xd)
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
	ch.Factorize(kdd)
	k := len(xs)
	ksd := mat.NewDense(k, n, nil)
	for i := range xs {
		for j := range xd {
			ksd.Set(i, j, kf(xs[i], xd[j]))
		}
	}
	var alpha mat.VecDense
	_ = ch.SolveVecTo(&alpha, mat.NewVecDense(n, yd))
	mean := make([]float64, k)
	var tmp mat.Dense
	_ = ch.SolveTo(&tmp, ksd.T())
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

// rejectionMoments returns the mean and covariance of N(m, K) truncated to
// f_star = max f, from n joint draws, and the number accepted.
func rejectionMoments(rng *rand.Rand, m []float64, k *mat.SymDense, star, n int) ([]float64, [][]float64, int) {
	d := len(m)
	var ch mat.Cholesky
	ch.Factorize(k)
	var l mat.TriDense
	ch.LTo(&l)
	z := make([]float64, d)
	f := make([]float64, d)
	sum := make([]float64, d)
	sum2 := make([][]float64, d)
	for i := range sum2 {
		sum2[i] = make([]float64, d)
	}
	acc := 0
	for s := 0; s < n; s++ {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		best := 0
		for i := 0; i < d; i++ {
			v := m[i]
			for j := 0; j <= i; j++ {
				v += l.At(i, j) * z[j]
			}
			f[i] = v
			if f[i] > f[best] {
				best = i
			}
		}
		if best != star {
			continue
		}
		acc++
		for i := 0; i < d; i++ {
			sum[i] += f[i]
			for j := 0; j < d; j++ {
				sum2[i][j] += f[i] * f[j]
			}
		}
	}
	mean := make([]float64, d)
	for i := range mean {
		mean[i] = sum[i] / float64(acc)
	}
	cov := make([][]float64, d)
	for i := range cov {
		cov[i] = make([]float64, d)
		for j := range cov[i] {
			cov[i][j] = sum2[i][j]/float64(acc) - mean[i]*mean[j]
		}
	}
	return mean, cov, acc
}

// TestEPFiveAgainstRejection compares EP with 10⁶ rejection samples. The
// tolerance is 3 Monte-Carlo standard errors plus EP's own approximation
// error: EP moment-matches each constraint in turn, so for |X*| − 1 = 4
// interacting half-space constraints its moments are not exact; on
// polyhedral truncations of Gaussians its mean errors are typically a few
// 1e-3 and covariance errors ~1e-2 prior standard deviations (Cunningham,
// Hennig & Lacoste-Julien 2011). We allow 0.02·sd for means and
// 0.03·sd_i·sd_j for covariances on top of the MC error.
func TestEPFiveAgainstRejection(t *testing.T) {
	m, k := seKernelPrior()
	rng := rand.New(rand.NewPCG(7, 8))
	for _, star := range []int{1, 3} {
		r, err := MaximizerEP(m, k, star, EPSettings{})
		if err != nil {
			t.Fatal(err)
		}
		if !r.Converged || r.Skipped > 0 {
			t.Fatalf("star %d: converged=%v skipped=%d", star, r.Converged, r.Skipped)
		}
		mc, cc, acc := rejectionMoments(rng, m, k, star, 1000000)
		if acc < 50000 {
			t.Fatalf("only %d accepted samples", acc)
		}
		worstM, worstC := 0.0, 0.0
		for i := range m {
			sdi := math.Sqrt(k.At(i, i))
			se := math.Sqrt(cc[i][i] / float64(acc))
			d := math.Abs(r.Mean[i] - mc[i])
			worstM = math.Max(worstM, d/sdi)
			if d > 3*se+0.02*sdi {
				t.Errorf("star %d mean[%d]: EP %.5f, MC %.5f ± %.5f", star, i, r.Mean[i], mc[i], se)
			}
			for j := range m {
				sdj := math.Sqrt(k.At(j, j))
				// SE of a sample covariance ≈ sqrt((σ_ii σ_jj + σ_ij²)/n).
				sec := math.Sqrt((cc[i][i]*cc[j][j] + cc[i][j]*cc[i][j]) / float64(acc))
				d := math.Abs(r.Cov.At(i, j) - cc[i][j])
				worstC = math.Max(worstC, d/(sdi*sdj))
				if d > 3*sec+0.03*sdi*sdj {
					t.Errorf("star %d cov[%d,%d]: EP %.5f, MC %.5f ± %.5f", star, i, j, r.Cov.At(i, j), cc[i][j], sec)
				}
			}
		}
		t.Logf("star %d: %d accepted, %d sweeps; worst mean err %.4f sd, worst cov err %.4f sd²", star, acc, r.Sweeps, worstM, worstC)
	}
}

func TestEPDegenerateAndFallback(t *testing.T) {
	// Two identical maximizers: the difference has zero variance, its site
	// stays flat and EP still returns finite moments.
	k := mat.NewSymDense(3, []float64{
		1, 1, 0.2,
		1, 1, 0.2,
		0.2, 0.2, 1,
	})
	r, err := MaximizerEP([]float64{0.1, 0.1, 0}, k, 0, EPSettings{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Degenerate != 1 {
		t.Fatalf("Degenerate = %d, want 1", r.Degenerate)
	}
	if !allFinite(r.Mean) {
		t.Fatal("non-finite mean")
	}

	// Negative cavity: a site precision larger than 1/(cᵀΣc) cannot be
	// removed; the update must be skipped and the site kept unchanged.
	m, kk := seKernelPrior()
	kt, n := symData(kk)
	st := &epState{k: n, star: 0, m: m, kt: kt,
		mu: append([]float64(nil), m...), sig: append([]float64(nil), kt...),
		nu: make([]float64, n), eta: make([]float64, n), degen: make([]bool, n), sc: make([]float64, n)}
	s := kt[0] + kt[1*n+1] - 2*kt[1]
	st.nu[1], st.eta[1] = 2/s, 0.3
	if st.update(1, 1) {
		t.Fatal("update with negative cavity variance was not skipped")
	}
	if st.nu[1] != 2/s || st.eta[1] != 0.3 {
		t.Fatal("skipped update changed the site")
	}
	for i := range m {
		if st.mu[i] != m[i] {
			t.Fatal("skipped update changed μ_ep")
		}
	}
}
