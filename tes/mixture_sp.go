package tes

import (
	"fmt"
	"math"
	"sort"

	"github.com/tesbo/tesbo/internal/linalg"
)

// spMixture is the query-independent part of TES_sp: all samples of all
// sets F_x* (rows of F, N×K, grouped by set in [Start[g], Start[g+1])),
// their within-set self-normalised log weights LogW, and the mixture weights
// Omega_t = p(x*(t)) w̄_t of q_sp(y_B | y_D).
type spMixture struct {
	K, N  int
	F     []float64
	LogW  []float64
	Omega []float64
	PSet  []float64 // p(x*) of each set
	Start []int
	Set   []int // set of each sample

	mode int // tests only: 0 automatic, 1 dense mode wherever safe, −1 never dense
}

// pruneLog: terms more than this far below the largest exponent are
// dropped from a log-sum-exp (they change it by < 4e-18 relative).
const pruneLog = 40

// info evaluates α_sp (§4.1 after Eq. (6), batch form §4.3, with |F_x*|⁻¹
// inside the sum and self-normalised weights, reading 2 of the package doc):
//
//	α = Σ_x* p(x*) Σ_{s∈F_x*} w̄_s E_{y~N(A f_s + b, C₀)}[log q_sp(y|x*) − log q_sp(y)],
//	q_sp(y|x*) = Σ_{t∈F_x*} w̄_t N(y; A f_t + b, C₀),  C₀ = S + σ_n² I.
//
// All components share C₀, so in coordinates whitened by its Cholesky
// factor L₀ (g_t = L₀⁻¹ A f_t, y = g_s + z) the log-densities differ only by
// e_t = −½|g_s − g_t|² + zᵀ g_t (terms common to all t cancel). The base
// points z are shared by all s. The steps: whitening (spWhiten), the choice
// of evaluation (windows for q = 1, dense mode, pruning: spPrepare), then
// either all samples at once (denseAll) or sample by sample (sampleInfo),
// and for the gradient the chain rule back to A and S (spGrad).
func (m *spMixture) info(A []float64, q int, S []float64, noise float64, base basePoints, grad bool) (mixResult, error) {
	w, err := m.spWhiten(A, q, S, noise, base)
	if err != nil {
		return mixResult{}, err
	}
	m.spPrepare(w, grad)
	if w.dense && w.n <= denseMatrixMax && w.maxLW-minLogW(m.LogW) <= 60 {
		// Every sample qualifies: do all of them with matrix products.
		w.alpha = m.denseAll(w.g, w.sq, w.qz, base, w.val, w.gg, w.uz, q)
	} else {
		for s := 0; s < w.n; s++ {
			if m.Omega[s] != 0 {
				m.sampleInfo(w, s)
			}
		}
	}
	res := mixResult{Alpha: w.alpha, SE: spSE(m, base, w.val)}
	if !grad {
		return res, nil
	}
	res.GA, res.GS = m.spGrad(w)
	return res, nil
}

// spWork holds the intermediate arrays of one info evaluation (q batch
// points, k = |X*|, n = |F| samples, nz base points).
type spWork struct {
	q, k, n, nz int
	base        basePoints
	grad        bool
	l0          []float64 // L₀, L₀ L₀ᵀ = C₀ = S + σ_n² I
	mm          []float64 // M = L₀⁻¹ A (q×k)
	g           []float64 // G = M Fᵀ (q×n): column t is g_t
	sq          []float64 // |g_t|²
	pz          []float64 // P = Zᵀ G (nz×n): zᵀ g_t
	maxLW       float64   // max_t LogW_t
	zmax        float64   // max_z |z|
	order       []int     // q = 1: samples sorted by g_t
	gsorted     []float64 // q = 1: g_t in that order
	dense       bool      // dense mode (see spPrepare)
	qz          []float64 // dense: Q_zt = e^{zᵀg_t − max_t zᵀg_t}
	ev, pev     []float64 // dense: per-sample scratch of denseRow
	all, cands  []int     // every sample; scratch for the pruned candidates
	d, gs, u    []float64 // scratch: |g_s − g_t|², g_s, the terms e_t
	val         []float64 // val[s·nz+z] = log q_sp(y|x*) − log q_sp(y) (unnormalised)
	alpha       float64
	// Gradient only: C_st of the current s (crow), Σ_s C_st (cvec),
	// U_zt (uz) and ∂α/∂G (gg).
	crow, cvec, uz, gg []float64
}

// spWhiten whitens the predictive covariance: C₀ = L₀ L₀ᵀ, M = L₀⁻¹ A,
// g_t = M f_t (G = M Fᵀ), |g_t|² and P = Zᵀ G.
func (m *spMixture) spWhiten(A []float64, q int, S []float64, noise float64, base basePoints) (*spWork, error) {
	k, n := m.K, m.N
	c0 := append([]float64(nil), S[:q*q]...)
	for r := 0; r < q; r++ {
		c0[r*q+r] += noise
	}
	w := &spWork{q: q, k: k, n: n, nz: base.N, base: base, l0: make([]float64, q*q)}
	if _, err := linalg.Cholesky(w.l0, c0, q); err != nil {
		return nil, fmt.Errorf("predictive covariance: %w", err)
	}
	w.mm = append([]float64(nil), A[:q*k]...)
	linalg.SolveLower(w.l0, q, w.mm, k) // M = L₀⁻¹ A
	w.g = make([]float64, q*n)
	gemm(false, true, 1, w.mm, q, k, m.F, n, k, 0, w.g) // G = M Fᵀ (q×N)
	w.sq = make([]float64, n)
	for r := 0; r < q; r++ {
		for t, v := range w.g[r*n : (r+1)*n] {
			w.sq[t] += v * v
		}
	}
	w.pz = make([]float64, w.nz*n)
	gemm(true, false, 1, base.Z, q, w.nz, w.g, q, n, 0, w.pz) // P = Zᵀ G
	return w, nil
}

// spPrepare allocates the scratch, sorts the samples by g_t for q = 1 (so
// that each (s, z) visits only the window of samples that can matter),
// decides dense mode and forms its factors, and finds max_z |z| for the
// pruning bound.
func (m *spMixture) spPrepare(w *spWork, grad bool) {
	n, nz := w.n, w.nz
	w.grad = grad
	w.d = make([]float64, n)
	w.gs = make([]float64, w.q)
	w.u = make([]float64, n)
	w.val = make([]float64, n*nz)
	if grad {
		w.crow = make([]float64, n)
		w.cvec = make([]float64, n)
		w.uz = make([]float64, nz*n)
		w.gg = make([]float64, w.q*n)
	}
	w.all = make([]int, n)
	for t := range w.all {
		w.all[t] = t
	}
	w.maxLW = math.Inf(-1)
	for _, v := range m.LogW {
		w.maxLW = math.Max(w.maxLW, v)
	}
	if w.q == 1 {
		w.order = append([]int(nil), w.all...)
		sort.Slice(w.order, func(a, b int) bool { return w.g[w.order[a]] < w.g[w.order[b]] })
		w.gsorted = make([]float64, n)
		for i, t := range w.order {
			w.gsorted[i] = w.g[t]
		}
	}
	w.dense = m.chooseDense(w)
	if w.dense {
		w.denseFactors()
	}
	for z := 0; z < nz; z++ {
		nrm := 0.0
		for r := 0; r < w.q; r++ {
			nrm += w.base.Z[r*nz+z] * w.base.Z[r*nz+z]
		}
		w.zmax = math.Max(w.zmax, math.Sqrt(nrm))
	}
	w.cands = make([]int, 0, n)
}

// sampleInfo adds sample s's terms Ω_s Σ_z w_z val_sz to α (by denseRow in
// dense mode when its weight allows, else base point by base point over the
// candidates that can matter) and, for the gradient, its share of ∂α/∂G.
func (m *spMixture) sampleInfo(w *spWork, s int) {
	q, n, nz := w.q, w.n, w.nz
	for r := 0; r < q; r++ {
		w.gs[r] = w.g[r*n+s]
	}
	// d_t = |g_s − g_t|².
	for t := range w.d {
		w.d[t] = w.sq[s] + w.sq[t]
	}
	for r := 0; r < q; r++ {
		for t, v := range w.g[r*n : (r+1)*n] {
			w.d[t] -= 2 * w.gs[r] * v
		}
	}
	set := m.Set[s]
	g0, g1 := m.Start[set], m.Start[set+1]
	if w.grad {
		for t := range w.crow {
			w.crow[t] = 0
		}
	}
	nzLoop := nz
	if w.dense && w.maxLW-m.LogW[s] <= 60 {
		w.alpha += m.denseRow(s, g0, g1, w.d, w.qz, w.ev, w.pev, w.base, w.val[s*nz:(s+1)*nz], w.crow, w.uz)
		nzLoop = 0
	}
	candS := w.all
	if q > 1 && nzLoop > 0 {
		candS = m.candidates(w, s)
	}
	for z := 0; z < nzLoop; z++ {
		m.pointInfo(w, s, z, g0, g1, candS)
	}
	if w.grad {
		w.sampleGrad(s)
	}
}

// candidates returns the samples that can come within e^{-40} of the own
// sample's term for some base point: |zᵀ(g_t − g_s)| ≤ |z|_max·√d_t, so t
// is skipped when −½d_t + |z|_max √d_t + LogW_t − LogW_s < −40.
func (m *spMixture) candidates(w *spWork, s int) []int {
	cand := w.cands[:0]
	for t := 0; t < w.n; t++ {
		d := w.d[t]
		if -0.5*d+w.zmax*math.Sqrt(math.Max(d, 0))+m.LogW[t]-m.LogW[s] >= -pruneLog {
			cand = append(cand, t)
		}
	}
	return cand
}

// window returns, for q = 1, the samples with |y − g_t| ≤ R for y = g_s + z:
// only those can be within e^{-40} of the largest term, the own sample s
// bounding the maximum from below.
func (m *spMixture) window(w *spWork, s, z int) []int {
	zv := w.base.Z[z]
	y := w.gs[0] + zv
	rad := math.Sqrt(2 * (pruneLog + 0.5*zv*zv + w.maxLW - m.LogW[s]))
	lo := sort.SearchFloat64s(w.gsorted, y-rad)
	hi := sort.SearchFloat64s(w.gsorted, math.Nextafter(y+rad, math.Inf(1)))
	return w.order[lo:hi]
}

// pointInfo adds sample s's term at base point z to α:
// val_sz = log Σ_{t∈set(s)} e^{e_t} − log Σ_t p(x*(t)) e^{e_t} with
// e_t = LogW_t − ½d_t + zᵀg_t, terms more than 40 nats below the largest
// dropped; and with the gradient ∂val/∂e_t = ρ^set_t 1[t ∈ set] − ρ^all_t,
// weighted by Ω_s w_z, into C_s· (crow) and U_z· (uz).
func (m *spMixture) pointInfo(w *spWork, s, z, g0, g1 int, candS []int) {
	n, nz := w.n, w.nz
	pzr := w.pz[z*n : (z+1)*n]
	cand := candS
	if w.q == 1 {
		cand = m.window(w, s, z)
	}
	u := w.u
	mx := math.Inf(-1)
	for _, t := range cand {
		v := m.LogW[t] - 0.5*w.d[t] + pzr[t]
		u[t] = v
		if v > mx {
			mx = v
		}
	}
	var sumG, sumA float64
	for _, t := range cand {
		if u[t]-mx < -pruneLog {
			u[t] = 0
			continue
		}
		e := math.Exp(u[t] - mx)
		u[t] = e
		sumA += m.PSet[m.Set[t]] * e
		if t >= g0 && t < g1 {
			sumG += e
		}
	}
	if !(sumG > 0) { // own set far below the global maximum: rescale
		w.val[s*nz+z] = m.rescaledVal(w, g0, g1, pzr, mx, sumA)
	} else {
		w.val[s*nz+z] = math.Log(sumG) - math.Log(sumA)
	}
	wz := m.Omega[s] * w.base.W[z]
	w.alpha += wz * w.val[s*nz+z]
	if !w.grad {
		return
	}
	invG, invA := 1/sumG, 1/sumA
	uzr := w.uz[z*n : (z+1)*n]
	for _, t := range cand {
		e := u[t]
		if e == 0 {
			continue
		}
		c := -m.PSet[m.Set[t]] * e * invA
		if t >= g0 && t < g1 {
			c += e * invG
		}
		c *= wz
		w.crow[t] += c
		uzr[t] += c
	}
}

// rescaledVal is val_sz when every own-set term underflowed against the
// global maximum mx: the own-set sum is taken relative to its own maximum
// mg, val = mg − mx + log Σ_{t∈set} e^{e_t − mg} − log sumA.
func (m *spMixture) rescaledVal(w *spWork, g0, g1 int, pzr []float64, mx, sumA float64) float64 {
	mg := math.Inf(-1)
	for t := g0; t < g1; t++ {
		mg = math.Max(mg, m.LogW[t]-0.5*w.d[t]+pzr[t])
	}
	sumG := 0.0
	for t := g0; t < g1; t++ {
		sumG += math.Exp(m.LogW[t] - 0.5*w.d[t] + pzr[t] - mg)
	}
	return mg - mx + math.Log(sumG) - math.Log(sumA)
}

// sampleGrad adds sample s's share of ∂α/∂G through
// e_t = −½|g_s − g_t|² + zᵀg_t: ∂/∂g_s = −Σ_t C_st (g_s − g_t) and
// ∂/∂g_t += C_st (g_s − g_t), the −C_st g_t part and the Σ_z U_zt z part
// added by spGrad.
func (w *spWork) sampleGrad(s int) {
	n := w.n
	rs := 0.0
	for t, c := range w.crow {
		rs += c
		w.cvec[t] += c
	}
	for r := 0; r < w.q; r++ {
		row := w.g[r*n : (r+1)*n]
		gr := w.gg[r*n : (r+1)*n]
		acc := 0.0
		for t, c := range w.crow {
			acc += c * row[t]
			gr[t] += c * w.gs[r]
		}
		gr[s] += acc - rs*w.gs[r]
	}
}

// spGrad completes ∂α/∂G (− Σ_s C_st g_t, + Z U) and applies the chain
// rule: G = M Fᵀ ⇒ ∂M = ∂G F; M = L₀⁻¹A ⇒ ∂A = L₀⁻ᵀ ∂M, ∂L₀ = −∂A Mᵀ, and
// ∂S = ∂C₀ from ∂L₀ through the Cholesky factor.
func (m *spMixture) spGrad(w *spWork) (ga, gs []float64) {
	q, k, n, nz := w.q, w.k, w.n, w.nz
	for r := 0; r < q; r++ {
		row := w.g[r*n : (r+1)*n]
		gr := w.gg[r*n : (r+1)*n]
		for t, c := range w.cvec {
			gr[t] -= c * row[t]
		}
	}
	gemm(false, false, 1, w.base.Z, q, nz, w.uz, nz, n, 1, w.gg) // + Z U
	ga = make([]float64, q*k)
	gemm(false, false, 1, w.gg, q, n, m.F, n, k, 0, ga)
	linalg.SolveLowerT(w.l0, q, ga, k)
	gl := make([]float64, q*q)
	gemm(false, true, -1, ga, q, k, w.mm, q, k, 0, gl)
	return ga, linalg.CholeskyVJP(w.l0, gl, q)
}

// spSE is the standard error of α_sp over the base points (0 for
// quadrature). The per-sample averages over z are the units; the sampling
// error of the sets F_x* themselves is part of the TES_sp approximation,
// not of its evaluation.
func spSE(m *spMixture, base basePoints, val []float64) float64 {
	if base.Quad {
		return 0
	}
	nz := base.N
	// Treat the base points as the random units: α = Σ_z w_z a_z with
	// a_z = Σ_s Ω_s val(s, z).
	a := make([]float64, nz)
	for s := 0; s < m.N; s++ {
		for z := 0; z < nz; z++ {
			a[z] += m.Omega[s] * val[s*nz+z]
		}
	}
	step := 1
	if base.Pairs {
		step = 2
	}
	var units []float64
	for z := 0; z < nz; z += step {
		x := a[z]
		if step == 2 {
			x = 0.5 * (a[z] + a[z+1])
		}
		units = append(units, x)
	}
	if len(units) < 2 {
		return 0
	}
	_, se := meanSE(units)
	return se
}

// newSPMixture assembles the TES_sp mixture from sample sets and p(x*) of
// each set's maximizer (renormalised over the sets present,
// reading 3 of the package doc). Importance samples with weight below 1e-4/|F_x*| are dropped and
// the rest renormalised: together they carry less than 1e-4 of their set's
// mass, so α moves by at most ~1e-4·H(x*), while the evaluation cost is
// quadratic in the number of samples (low-dimensional problems often keep
// only a third of them).
func newSPMixture(sets []sampleSet, pstar []float64) (*spMixture, error) {
	if len(sets) == 0 {
		return nil, fmt.Errorf("tes: no sample sets")
	}
	_, k := sets[0].F.Dims()
	m := &spMixture{K: k, Start: []int{0}}
	tot := 0.0
	for _, st := range sets {
		tot += pstar[st.Star]
	}
	if !(tot > 0) {
		return nil, fmt.Errorf("tes: all sample sets have zero maximizer probability")
	}
	for si, st := range sets {
		p := pstar[st.Star] / tot
		rows, _ := st.F.Dims()
		var kept []int
		wsum := 0.0
		for i := 0; i < rows; i++ {
			if st.W[i] >= 1e-4/float64(rows) && st.W[i] > 0 {
				kept = append(kept, i)
				wsum += st.W[i]
			}
		}
		for _, i := range kept {
			w := st.W[i] / wsum
			m.F = append(m.F, st.F.RawRowView(i)...)
			m.LogW = append(m.LogW, math.Log(w))
			m.Omega = append(m.Omega, p*w)
			m.Set = append(m.Set, si)
		}
		m.PSet = append(m.PSet, p)
		m.Start = append(m.Start, len(m.Set))
	}
	m.N = len(m.Set)
	return m, nil
}

// eachBlock calls f with the first index g0 and width w of every non-empty
// set's diagonal block (the trusted maximizers of one set share a block of
// the dense mode's matrices).
func (m *spMixture) eachBlock(f func(g0, w int)) {
	for set := range m.PSet {
		if g0, g1 := m.Start[set], m.Start[set+1]; g1 > g0 {
			f(g0, g1-g0)
		}
	}
}
