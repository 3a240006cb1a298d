package tes

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

func randSPMixture(rng *rand.Rand, k, sets, per int) *spMixture {
	var ss []sampleSet
	p := make([]float64, sets)
	for i := 0; i < sets; i++ {
		data := randMatrix(rng, per, k, 1)
		w := make([]float64, per)
		tot := 0.0
		for j := range w {
			w[j] = 0.1 + rng.Float64()
			tot += w[j]
		}
		for j := range w {
			w[j] /= tot
		}
		ss = append(ss, sampleSet{Star: i, F: matDense(per, k, data), W: w})
		p[i] = 0.3 + rng.Float64()
	}
	m, err := newSPMixture(ss, p)
	if err != nil {
		panic(err)
	}
	return m
}

func TestSPInfoGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, q := range []int{1, 3} {
		for _, mode := range []int{1, -1} {
			k := 4
			m := randSPMixture(rng, k, 3, 6)
			m.mode = mode
			A := randMatrix(rng, q, k, 0.5)
			S := randSPD(rng, q, 0.05, 0.3)
			var base basePoints
			if q == 1 {
				base = ghBase(1, 12)
			} else {
				base = mcBase(rand.New(rand.NewPCG(5, 5)), q, 16)
			}
			f := func(A, S []float64) float64 {
				r, err := m.info(A, q, S, 0.02, base, false)
				if err != nil {
					t.Fatal(err)
				}
				return r.Alpha
			}
			r, err := m.info(A, q, S, 0.02, base, true)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(r.Alpha-f(A, S)) > 1e-14 {
				t.Fatalf("q=%d: value differs with and without gradient", q)
			}
			fdCheck(t, fmt.Sprintf("sp q=%d mode=%d", q, mode), f, A, S, r.GA, r.GS, q)
		}
	}
}

// TestSPMatchesGaussForSingletons: with one sample per set, q_sp is a
// Gaussian mixture with shared covariance, i.e. the TES_ep form with
// Σ_i = 0 and μ_i = f_i; both evaluators must agree on the same base points.
func TestSPMatchesGaussForSingletons(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	k := 4
	for _, q := range []int{1, 3} {
		m := randSPMixture(rng, k, 4, 1)
		e := &epMixture{K: k}
		for i := 0; i < m.N; i++ {
			e.P = append(e.P, m.Omega[i])
			e.Mu = append(e.Mu, m.F[i*k:(i+1)*k])
			e.Sig = append(e.Sig, make([]float64, k*k))
		}
		var base basePoints
		if q == 1 {
			base = ghBase(1, 20)
		} else {
			base = mcBase(rand.New(rand.NewPCG(6, 6)), q, 64)
		}
		A := randMatrix(rng, q, k, 0.5)
		S := randSPD(rng, q, 0.05, 0.3)
		rs, err := m.info(A, q, S, 0.01, base, true)
		if err != nil {
			t.Fatal(err)
		}
		re, err := e.gaussInfo(A, q, S, 0.01, bases(m.N, func() basePoints { return base }), true)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(rs.Alpha-re.Alpha) > 1e-10 {
			t.Fatalf("q=%d: sp %.12f vs gauss %.12f", q, rs.Alpha, re.Alpha)
		}
		for a := range rs.GA {
			if math.Abs(rs.GA[a]-re.GA[a]) > 1e-8 {
				t.Fatalf("q=%d: ∂A differs at %d: %g vs %g", q, a, rs.GA[a], re.GA[a])
			}
		}
	}
}

// TestSPOneDimExact compares the q = 1 Gauss–Hermite α_sp with trapezoidal
// integration of the mixtures.
func TestSPOneDimExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	k := 3
	m := randSPMixture(rng, k, 3, 5)
	A := randMatrix(rng, 1, k, 0.4)
	S := []float64{0.01}
	noise := 0.02
	r, err := m.info(A, 1, S, noise, ghBase(1, 40), false)
	if err != nil {
		t.Fatal(err)
	}
	v := S[0] + noise
	mu := make([]float64, m.N)
	for t := range mu {
		for a := 0; a < k; a++ {
			mu[t] += A[a] * m.F[t*k+a]
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range mu {
		lo, hi = math.Min(lo, x-12*math.Sqrt(v)), math.Max(hi, x+12*math.Sqrt(v))
	}
	const n = 100000
	h := (hi - lo) / n
	exact := 0.0
	nsets := len(m.PSet)
	for s := 0; s <= n; s++ {
		y := lo + float64(s)*h
		qs := make([]float64, nsets)
		qa := 0.0
		for t := range mu {
			dn := math.Exp(-0.5*(y-mu[t])*(y-mu[t])/v) / math.Sqrt(2*math.Pi*v)
			qs[m.Set[t]] += math.Exp(m.LogW[t]) * dn
			qa += m.Omega[t] * dn
		}
		for x := 0; x < nsets; x++ {
			if qs[x] > 0 {
				exact += h * m.PSet[x] * qs[x] * math.Log(qs[x]/qa)
			}
		}
	}
	if math.Abs(r.Alpha-exact) > 1e-4 {
		t.Fatalf("α_sp = %.6f, exact %.6f", r.Alpha, exact)
	}
}

func matDense(r, c int, d []float64) *mat.Dense { return mat.NewDense(r, c, d) }

// TestSPDenseModeAgrees: the factorised (dense) and the windowed/pruned
// evaluations of α_sp and its gradient agree, for overlapping (small A) and
// separated (large A) samples.
func TestSPDenseModeAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	for _, q := range []int{1, 3} {
		for _, scale := range []float64{0.1, 3} {
			k := 4
			m := randSPMixture(rng, k, 3, 30)
			A := randMatrix(rng, q, k, scale)
			S := randSPD(rng, q, 0.05, 0.3)
			var base basePoints
			if q == 1 {
				base = ghBase(1, 16)
			} else {
				base = mcBase(rand.New(rand.NewPCG(7, 7)), q, 16)
			}
			var res [2]mixResult
			for i, mode := range []int{1, -1} {
				m.mode = mode
				r, err := m.info(A, q, S, 0.01, base, true)
				if err != nil {
					t.Fatal(err)
				}
				res[i] = r
			}
			m.mode = 0
			if math.Abs(res[0].Alpha-res[1].Alpha) > 1e-12 {
				t.Errorf("q=%d scale=%g: dense %.15f vs pruned %.15f", q, scale, res[0].Alpha, res[1].Alpha)
			}
			for a := range res[0].GA {
				if math.Abs(res[0].GA[a]-res[1].GA[a]) > 1e-9*(1+math.Abs(res[1].GA[a])) {
					t.Errorf("q=%d scale=%g: ∂A[%d] dense %g vs pruned %g", q, scale, a, res[0].GA[a], res[1].GA[a])
				}
			}
			for a := range res[0].GS {
				if math.Abs(res[0].GS[a]-res[1].GS[a]) > 1e-9*(1+math.Abs(res[1].GS[a])) {
					t.Errorf("q=%d scale=%g: ∂S[%d] dense %g vs pruned %g", q, scale, a, res[0].GS[a], res[1].GS[a])
				}
			}
		}
	}
}

// spreadWeights gives every stride-th sample a weight e^{−gap} relative to
// its set's others (renormalising the set), so that the log-weights span
// more than the all-samples dense evaluation accepts (60 nats).
func spreadWeights(m *spMixture, stride int, gap float64) {
	for set := range m.PSet {
		g0, g1 := m.Start[set], m.Start[set+1]
		tot := 0.0
		for t := g0; t < g1; t++ {
			if (t-g0)%stride == 1 {
				m.LogW[t] -= gap
			}
			tot += math.Exp(m.LogW[t])
		}
		for t := g0; t < g1; t++ {
			m.LogW[t] -= math.Log(tot)
			m.Omega[t] = m.PSet[set] * math.Exp(m.LogW[t])
		}
	}
}

// TestSPDenseRowAgrees covers the per-sample dense evaluation (denseRow),
// used in dense mode when the all-samples matrix form is not: |F| > 1400
// (denseMatrixMax), or log-weights spanning more than 60 nats (then the
// samples within 60 nats of the heaviest take denseRow and the rest the
// pruned loop, in the same evaluation). The samples overlap (small A), so
// dense mode is safe (checked: zᵀg_t spans far less than its 200-nat
// limit). α and its gradient must match the pruned/windowed evaluation
// (mode −1) to 1e-10·(1 + |value|): pruning drops only terms below
// e^{−40} ≈ 4e-18 of the largest in each log-sum-exp, so the two differ by
// rounding in sums of ~|F|·n_z terms (α differed by ≤ 1.4e-16 when
// written). The finite-difference check also covers denseRow's gradient
// on the smaller mixture, at q = 1 and 3. The large mixture is checked at
// q = 1 with 4 base points only: the pruned path costs |F|²·n_z
// exponentials when every sample overlaps.
func TestSPDenseRowAgrees(t *testing.T) {
	cases := []struct {
		name   string
		per    int // samples per set (3 sets)
		spread bool
		nz     int   // base points
		qs     []int // batch sizes
	}{
		{"weights span 75 nats", 30, true, 16, []int{1, 3}},
		{"|F| = 1440 > denseMatrixMax", 480, false, 4, []int{1}},
	}
	rng := rand.New(rand.NewPCG(39, 40))
	for _, tc := range cases {
		for _, q := range tc.qs {
			k := 4
			m := randSPMixture(rng, k, 3, tc.per)
			if tc.spread {
				spreadWeights(m, 5, 75)
				if s := slices.Max(m.LogW) - minLogW(m.LogW); s <= 60 {
					t.Fatalf("log-weight spread %.1f, want > 60", s)
				}
			} else if m.N <= denseMatrixMax {
				t.Fatalf("|F| = %d, want > %d", m.N, denseMatrixMax)
			}
			A := randMatrix(rng, q, k, 0.3)
			S := randSPD(rng, q, 0.05, 0.3)
			const noise = 0.01
			var base basePoints
			if q == 1 {
				base = ghBase(1, tc.nz)
			} else {
				base = mcBase(rand.New(rand.NewPCG(8, 8)), q, tc.nz)
			}
			name := fmt.Sprintf("%s, q=%d", tc.name, q)
			if sp := zgSpan(m, A, S, noise, base, q); sp > 100 {
				t.Fatalf("%s: zᵀg spans %.0f nats; dense mode needs ≤ 200", name, sp)
			}
			var res [2]mixResult
			for i, mode := range []int{1, -1} {
				m.mode = mode
				r, err := m.info(A, q, S, noise, base, true)
				if err != nil {
					t.Fatal(err)
				}
				res[i] = r
			}
			t.Logf("%s: α dense %.15f, pruned %.15f (diff %.1e)", name, res[0].Alpha, res[1].Alpha, math.Abs(res[0].Alpha-res[1].Alpha))
			if d := math.Abs(res[0].Alpha - res[1].Alpha); d > 1e-10*(1+math.Abs(res[1].Alpha)) {
				t.Errorf("%s: α dense %.15f vs pruned %.15f", name, res[0].Alpha, res[1].Alpha)
			}
			for _, g := range [][2][]float64{{res[0].GA, res[1].GA}, {res[0].GS, res[1].GS}} {
				for a := range g[0] {
					if d := math.Abs(g[0][a] - g[1][a]); d > 1e-10*(1+math.Abs(g[1][a])) {
						t.Errorf("%s: gradient entry %d dense %g vs pruned %g", name, a, g[0][a], g[1][a])
					}
				}
			}
			if tc.spread {
				m.mode = 1
				f := func(A, S []float64) float64 {
					r, err := m.info(A, q, S, noise, base, false)
					if err != nil {
						t.Fatal(err)
					}
					return r.Alpha
				}
				fdCheck(t, name, f, A, S, res[0].GA, res[0].GS, q)
			}
		}
	}
}

// zgSpan is the largest spread over samples t of zᵀg_t over the base points
// z, with g_t = L₀⁻¹ A f_t and L₀ L₀ᵀ = S + σ_n² I: dense mode requires it
// to be at most 200 nats.
func zgSpan(m *spMixture, A, S []float64, noise float64, base basePoints, q int) float64 {
	c0 := append([]float64(nil), S...)
	for r := range q {
		c0[r*q+r] += noise
	}
	l0 := make([]float64, q*q)
	if _, err := linalg.Cholesky(l0, c0, q); err != nil {
		panic(err)
	}
	mm := append([]float64(nil), A...)
	linalg.SolveLower(l0, q, mm, m.K)
	g := make([]float64, q*m.N)
	gemm(false, true, 1, mm, q, m.K, m.F, m.N, m.K, 0, g)
	span := 0.0
	for z := range base.N {
		lo, hi := math.Inf(1), math.Inf(-1)
		for t := range m.N {
			v := 0.0
			for r := range q {
				v += base.Z[r*base.N+z] * g[r*m.N+t]
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		span = math.Max(span, hi-lo)
	}
	return span
}
