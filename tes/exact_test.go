package tes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// exactInfo computes the exact TES information gain I(x*; y_B) for the
// maximizer x* of f over the rows of xs, by the other side of the mutual
// information (the paper's Eq. (4) for a batch):
//
//	I = H(x* | y_D) − E_{y_B}[ H(x* | y_D, y_B) ],
//
// where p(x* | y_D, y_B) is again a Gaussian orthant probability (f_X*
// given y_D and y_B is Gaussian, with a mean linear in y_B). The outer
// expectation uses Gauss–Hermite quadrature for |B| = 1 (40 nodes) and
// nY antithetic Monte-Carlo draws otherwise; it returns I and its standard
// error (0 for quadrature; the orthant probabilities are estimated to ~2e-5).
func exactInfo(t testing.TB, g *gp.GP, xs, xb *mat.Dense, nY int, rng *rand.Rand) (float64, float64) {
	t.Helper()
	k, d := xs.Dims()
	q, _ := xb.Dims()
	all := mat.NewDense(k+q, d, nil)
	all.Slice(0, k, 0, d).(*mat.Dense).Copy(xs)
	all.Slice(k, k+q, 0, d).(*mat.Dense).Copy(xb)
	mu, cov := g.Joint(all)
	noise := g.NoiseVar() + g.Jitter()
	// Σ_yy = Σ_BB + σ²I, gain W = Σ_*B Σ_yy⁻¹, posterior covariance of f_X*.
	syy := mat.NewSymDense(q, nil)
	for i := 0; i < q; i++ {
		for j := 0; j <= i; j++ {
			v := cov.At(k+i, k+j)
			if i == j {
				v += noise
			}
			syy.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(syy) {
		t.Fatal("exactInfo: Σ_yy not PD")
	}
	sxb := mat.NewDense(k, q, nil)
	for i := 0; i < k; i++ {
		for j := 0; j < q; j++ {
			sxb.Set(i, j, cov.At(i, k+j))
		}
	}
	var wt mat.Dense // W = Σ_*B Σ_yy⁻¹ (k×q), via Σ_yy⁻¹ Σ_B*
	if err := ch.SolveTo(&wt, sxb.T()); err != nil {
		t.Fatal(err)
	}
	post := mat.NewSymDense(k, nil)
	for i := 0; i < k; i++ {
		for j := 0; j <= i; j++ {
			v := cov.At(i, j)
			for l := 0; l < q; l++ {
				v -= sxb.At(i, l) * wt.At(l, j)
			}
			post.SetSym(i, j, v)
		}
	}
	var lyy mat.TriDense
	ch.LTo(&lyy)
	tight := MVNSettings{AbsTol: 2e-5, RelTol: 1e-3, MaxPoints: 1 << 12}
	m0 := mu[:k]
	p0, err := MaximizerProbabilities(rng, m0, cov.SliceSym(0, k).(*mat.SymDense), tight)
	if err != nil {
		t.Fatal(err)
	}
	h0 := entropy(p0.P)
	condH := func(z []float64) float64 {
		// y − μ_B = L_yy z; mean of f_X* = m0 + W (y − μ_B).
		dy := make([]float64, q)
		for i := 0; i < q; i++ {
			for j := 0; j <= i; j++ {
				dy[i] += lyy.At(i, j) * z[j]
			}
		}
		m := make([]float64, k)
		for i := 0; i < k; i++ {
			m[i] = m0[i]
			for l := 0; l < q; l++ {
				m[i] += wt.At(l, i) * dy[l]
			}
		}
		p, err := MaximizerProbabilities(rng, m, post, tight)
		if err != nil {
			t.Fatal(err)
		}
		return entropy(p.P)
	}
	if q == 1 {
		b := ghBase(1, 40)
		eh := 0.0
		for i := 0; i < b.N; i++ {
			eh += b.W[i] * condH([]float64{b.Z[i]})
		}
		return h0 - eh, 0
	}
	vals := make([]float64, 0, nY/2)
	z := make([]float64, q)
	zm := make([]float64, q)
	for s := 0; s < nY/2; s++ {
		for i := range z {
			z[i] = rng.NormFloat64()
			zm[i] = -z[i]
		}
		vals = append(vals, 0.5*(condH(z)+condH(zm)))
	}
	eh, se := meanSE(vals)
	return h0 - eh, se
}

// TestAgainstExactInformation compares TES_ep (and, with TES_SLOW=1,
// TES_sp with large sample sets) with the exact information gain
// I(x*; y_B) on a small setting (2-d, 10 observations, |X*| = 5), at the
// batch that maximizes TES_ep, for |B| = 1 and 3. An independent check of
// the paper on a problem of that size found exact 0.396 / 0.802 and TES_ep
// 0.384 / 0.694: EP
// is close at |B| = 1 and under-counts more for batches. We require TES_ep
// within 15% (+0.01) of the exact value at |B| = 1 and 25% at |B| = 3
// (beyond the Monte-Carlo errors). TES_sp with 1000 samples per x* must
// be within 10% (+3 SE) at |B| = 1 and not below the exact value (beyond
// 3 SE) at |B| = 3: its estimate converges from above (as that check found too), and
// with noise variance 1e-3 and a 3-d y_B its self-inclusion bias is still
// large at this sample size (measured: 1.22 vs 0.89 on seed 71).
func TestAgainstExactInformation(t *testing.T) {
	slow := os.Getenv("TES_SLOW") != ""
	for _, seed := range []uint64{71, 72} {
		g, ep, _ := models(t, seed)
		rng := rand.New(rand.NewPCG(seed, 73))
		var sp *Model
		if slow {
			var err error
			sp, err = modelAt(context.Background(), g, rng, ep.XStar, Settings{Method: SP, SPSamples: 1000})
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range []int{1, 3} {
			f, err := ep.Func(q, nil, rng)
			if err != nil {
				t.Fatal(err)
			}
			xb, aEP, err := acq.Maximize(context.Background(), f, q, 2, optimizeDefaults(acq.OptimizeSettings{}, q), rng)
			if err != nil {
				t.Fatal(err)
			}
			_, seEP, _ := f.Estimate(xb)
			exact, seEx := exactInfo(t, g, ep.XStar, xb, 300, rng)
			msg := ""
			if sp != nil {
				fs, err := sp.Func(q, nil, rng)
				if err != nil {
					t.Fatal(err)
				}
				aSP, seSP, _ := fs.Estimate(xb)
				msg = fmt.Sprintf(", TES_sp(1000/x*) %.4f ± %.4f", aSP, seSP)
				tol := 3 * math.Hypot(seSP, seEx)
				if (q == 1 && math.Abs(aSP-exact) > 0.1*exact+tol) || aSP < exact-tol {
					t.Errorf("seed %d |B|=%d: TES_sp %.4f vs exact %.4f", seed, q, aSP, exact)
				}
			}
			t.Logf("seed %d |B|=%d: H(x*) %.4f, exact I %.4f ± %.4f, TES_ep %.4f ± %.4f%s", seed, q, ep.Entropy(), exact, seEx, aEP, seEP, msg)
			rel := 0.15
			if q > 1 {
				rel = 0.25
			}
			if math.Abs(aEP-exact) > rel*exact+0.01+3*math.Hypot(seEP, seEx) {
				t.Errorf("seed %d |B|=%d: TES_ep %.4f vs exact %.4f", seed, q, aEP, exact)
			}
		}
	}
}

// TestExactInfoSanity checks the brute-force reference itself: observing
// f at every x* with negligible noise reveals x*, so I(x*; y_X*) ≈ H(x*);
// a query far from X* (many length-scales) carries no information. It also
// logs TES_ep there (with noise 1e-3): a Gaussian mixture of EP
// approximations of the disjoint truncated posteriors overlaps, so EP
// under-counts most when the batch observes X* itself.
func TestExactInfoSanity(t *testing.T) {
	rng := rand.New(rand.NewPCG(74, 75))
	g0 := toyGP(t, 74, 10, 2, 0.3, 1e-7)
	m0, err := NewModel(context.Background(), g0, rng, 5, nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	h := m0.Entropy()
	all, se := exactInfo(t, g0, m0.XStar, m0.XStar, 100, rng)
	if math.Abs(all-h) > 0.01*h+3*se {
		t.Errorf("I(x*; y at X*) = %.4f ± %.4f, want ≈ H = %.4f", all, se, h)
	}

	g, ep, _ := models(t, 74)
	f, err := ep.Func(5, nil, rng)
	if err != nil {
		t.Fatal(err)
	}
	ex, seEx := exactInfo(t, g, ep.XStar, ep.XStar, 200, rng)
	aEP, seEP, _ := f.Estimate(ep.XStar)
	t.Logf("batch = X*, noise 1e-3: H %.4f, exact %.4f ± %.4f, TES_ep %.4f ± %.4f", ep.Entropy(), ex, seEx, aEP, seEP)

	xs := mat.NewDense(2, 1, []float64{0.2, 0.3})
	g1, err := gp.New(gp.NewSE([]float64{0.02}, 1), 1e-3, mat.NewDense(1, 1, []float64{0.9}), []float64{0.1})
	if err != nil {
		t.Fatal(err)
	}
	far, _ := exactInfo(t, g1, xs, mat.NewDense(1, 1, []float64{0.7}), 0, rng)
	if math.Abs(far) > 1e-6 {
		t.Errorf("far query: exact I = %g, want 0", far)
	}
}
