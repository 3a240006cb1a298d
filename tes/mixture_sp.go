package tes

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

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
// points z are shared by all s.
func (m *spMixture) info(A []float64, q int, S []float64, noise float64, base basePoints, grad bool) (mixResult, error) {
	k, n := m.K, m.N
	c0 := append([]float64(nil), S[:q*q]...)
	for r := 0; r < q; r++ {
		c0[r*q+r] += noise
	}
	l0 := make([]float64, q*q)
	if _, err := linalg.Cholesky(l0, c0, q); err != nil {
		return mixResult{}, fmt.Errorf("predictive covariance: %w", err)
	}
	mm := append([]float64(nil), A[:q*k]...)
	linalg.SolveLower(l0, q, mm, k) // M = L₀⁻¹ A
	g := make([]float64, q*n)
	gemm(false, true, 1, mm, q, k, m.F, n, k, 0, g) // G = M Fᵀ (q×N)
	sq := make([]float64, n)
	for r := 0; r < q; r++ {
		for t, v := range g[r*n : (r+1)*n] {
			sq[t] += v * v
		}
	}
	nz := base.N
	pz := make([]float64, nz*n)
	gemm(true, false, 1, base.Z, q, nz, g, q, n, 0, pz) // P = Zᵀ G
	logp := make([]float64, len(m.PSet))
	for i, p := range m.PSet {
		logp[i] = math.Log(p)
	}
	pset := m.PSet
	d := make([]float64, n)
	gs := make([]float64, q)
	u := make([]float64, n)
	val := make([]float64, n*nz)
	var crow, cvec, uz, gg []float64
	if grad {
		crow = make([]float64, n)
		cvec = make([]float64, n)
		uz = make([]float64, nz*n)
		gg = make([]float64, q*n)
	}
	all := make([]int, n)
	for t := range all {
		all[t] = t
	}
	// For q = 1, samples sorted by g_t let each (s, z) visit only the window
	// of samples that can matter.
	var order []int
	var gsorted []float64
	maxLogW := math.Inf(-1)
	if q == 1 {
		order = append([]int(nil), all...)
		sort.Slice(order, func(a, b int) bool { return g[order[a]] < g[order[b]] })
		gsorted = make([]float64, n)
		for i, t := range order {
			gsorted[i] = g[t]
		}
		for _, v := range m.LogW {
			maxLogW = math.Max(maxLogW, v)
		}
	}
	// Dense mode: where the samples overlap (the query is weakly informative)
	// nearly every term of every log-sum-exp matters and the windowed or
	// pruned loops above cost |F|²·n_z exponentials. There the terms factor,
	// e^{LogW_t − ½d_st + zᵀg_t} = E_st·Q_zt, so each sum is a dot product:
	// |F| exponentials per s instead of |F|·n_z. The factorization is safe
	// when zᵀg_t spans at most 200 nats (no factor underflows while its
	// product still matters) and the own sample's weight is within e^60 of
	// the largest (so it bounds the sums away from underflow).
	maxLW := math.Inf(-1)
	for _, v := range m.LogW {
		maxLW = math.Max(maxLW, v)
	}
	dense := true
	for z := 0; z < nz && dense; z++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range pz[z*n : (z+1)*n] {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		dense = hi-lo <= 200
	}
	if q == 1 && dense && m.mode == 0 {
		// Windowed mode costs ~n_z·W exponentials per sample (W = window
		// size), dense mode ~|F| plus 4·n_z·|F| flops (~|F|·n_z/2
		// exponentials' worth): prefer windows when they hold under half of
		// the samples.
		w := 0
		for s := 0; s < n; s++ {
			rad := math.Sqrt(2 * (pruneLog + maxLogW - m.LogW[s]))
			lo := sort.SearchFloat64s(gsorted, g[s]-rad)
			hi := sort.SearchFloat64s(gsorted, g[s]+rad)
			w += hi - lo
		}
		dense = 2*w > n*n
	}
	if m.mode < 0 {
		dense = false
	}
	var qz, ev, pev []float64
	if dense {
		qz = make([]float64, nz*n)
		for z := 0; z < nz; z++ {
			row := pz[z*n : (z+1)*n]
			mx := math.Inf(-1)
			for _, v := range row {
				mx = math.Max(mx, v)
			}
			for t, v := range row {
				qz[z*n+t] = math.Exp(v - mx)
			}
		}
		ev = make([]float64, n)
		pev = make([]float64, n)
	}
	zmax := 0.0
	for z := 0; z < nz; z++ {
		nrm := 0.0
		for r := 0; r < q; r++ {
			nrm += base.Z[r*nz+z] * base.Z[r*nz+z]
		}
		zmax = math.Max(zmax, math.Sqrt(nrm))
	}
	cands := make([]int, 0, n)
	alpha := 0.0
	nzLoop := nz
	if dense && n <= denseMatrixMax && maxLW-minLogW(m.LogW) <= 60 {
		// Every sample qualifies: do all of them with matrix products.
		alpha = m.denseAll(g, sq, qz, base, val, gg, uz, q)
		n = 0 // skip the per-sample loop below
	}
	for s := 0; s < n; s++ {
		if m.Omega[s] == 0 {
			continue
		}
		for r := 0; r < q; r++ {
			gs[r] = g[r*n+s]
		}
		// d_t = |g_s − g_t|².
		for t := range d {
			d[t] = sq[s] + sq[t]
		}
		for r := 0; r < q; r++ {
			for t, v := range g[r*n : (r+1)*n] {
				d[t] -= 2 * gs[r] * v
			}
		}
		set := m.Set[s]
		g0, g1 := m.Start[set], m.Start[set+1]
		if grad {
			for t := range crow {
				crow[t] = 0
			}
		}
		if dense && maxLW-m.LogW[s] <= 60 {
			alpha += m.denseRow(s, g0, g1, d, qz, ev, pev, base, val[s*nz:(s+1)*nz], crow, uz)
			nzLoop = 0
		} else {
			nzLoop = nz
		}
		// Samples that cannot come within e^{-40} of the own sample's term
		// for any base point (|zᵀ(g_t − g_s)| ≤ |z|_max·√d_t) are skipped.
		candS := all
		if q > 1 && nzLoop > 0 {
			candS = cands[:0]
			for t := 0; t < n; t++ {
				if -0.5*d[t]+zmax*math.Sqrt(math.Max(d[t], 0))+m.LogW[t]-m.LogW[s] >= -pruneLog {
					candS = append(candS, t)
				}
			}
		}
		for z := 0; z < nzLoop; z++ {
			pzr := pz[z*n : (z+1)*n]
			cand := candS
			if q == 1 {
				// Only samples with |y − g_t| ≤ R can be within e^{-40} of
				// the largest term, where y = g_s + z and the own sample s
				// bounds the maximum from below.
				zv := base.Z[z]
				y := gs[0] + zv
				rad := math.Sqrt(2 * (pruneLog + 0.5*zv*zv + maxLogW - m.LogW[s]))
				lo := sort.SearchFloat64s(gsorted, y-rad)
				hi := sort.SearchFloat64s(gsorted, math.Nextafter(y+rad, math.Inf(1)))
				cand = order[lo:hi]
			}
			mx := math.Inf(-1)
			for _, t := range cand {
				v := m.LogW[t] - 0.5*d[t] + pzr[t]
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
				sumA += pset[m.Set[t]] * e
				if t >= g0 && t < g1 {
					sumG += e
				}
			}
			if !(sumG > 0) { // own set far below the global maximum: rescale
				mg := math.Inf(-1)
				for t := g0; t < g1; t++ {
					mg = math.Max(mg, m.LogW[t]-0.5*d[t]+pzr[t])
				}
				sumG = 0
				for t := g0; t < g1; t++ {
					sumG += math.Exp(m.LogW[t] - 0.5*d[t] + pzr[t] - mg)
				}
				val[s*nz+z] = mg - mx + math.Log(sumG) - math.Log(sumA)
			} else {
				val[s*nz+z] = math.Log(sumG) - math.Log(sumA)
			}
			wz := m.Omega[s] * base.W[z]
			alpha += wz * val[s*nz+z]
			if !grad {
				continue
			}
			// ∂val/∂e_t = ρ^set_t 1[t ∈ set] − ρ^all_t.
			invG, invA := 1/sumG, 1/sumA
			uzr := uz[z*n : (z+1)*n]
			for _, t := range cand {
				e := u[t]
				if e == 0 {
					continue
				}
				c := -pset[m.Set[t]] * e * invA
				if t >= g0 && t < g1 {
					c += e * invG
				}
				c *= wz
				crow[t] += c
				uzr[t] += c
			}
		}
		if !grad {
			continue
		}
		// e_t = −½|g_s − g_t|² + zᵀg_t: ∂/∂g_s = −Σ_t C_st (g_s − g_t),
		// ∂/∂g_t += C_st (g_s − g_t) (+ Σ_z U_zt z, added below).
		rs := 0.0
		for t, c := range crow {
			rs += c
			cvec[t] += c
		}
		for r := 0; r < q; r++ {
			row := g[r*n : (r+1)*n]
			gr := gg[r*n : (r+1)*n]
			acc := 0.0
			for t, c := range crow {
				acc += c * row[t]
				gr[t] += c * gs[r]
			}
			gr[s] += acc - rs*gs[r]
		}
	}
	n = m.N
	res := mixResult{Alpha: alpha, SE: spSE(m, base, val)}
	if !grad {
		return res, nil
	}
	for r := 0; r < q; r++ {
		row := g[r*n : (r+1)*n]
		gr := gg[r*n : (r+1)*n]
		for t, c := range cvec {
			gr[t] -= c * row[t]
		}
	}
	gemm(false, false, 1, base.Z, q, nz, uz, nz, n, 1, gg) // + Z U
	// G = M Fᵀ ⇒ ∂M = ∂G F; M = L₀⁻¹A ⇒ ∂A = L₀⁻ᵀ ∂M, ∂L₀ = −∂A Mᵀ.
	ga := make([]float64, q*k)
	gemm(false, false, 1, gg, q, n, m.F, n, k, 0, ga)
	linalg.SolveLowerT(l0, q, ga, k)
	gl := make([]float64, q*q)
	gemm(false, true, -1, ga, q, k, mm, q, k, 0, gl)
	res.GA = ga
	res.GS = cholVJP(l0, gl, q)
	return res, nil
}

// denseMatrixMax bounds |F| for the all-samples dense evaluation, which
// keeps two |F|×|F| matrices (32 MB at the bound).
const denseMatrixMax = 1400

func minLogW(lw []float64) float64 {
	m := math.Inf(1)
	for _, v := range lw {
		m = math.Min(m, v)
	}
	return m
}

// denseAll is dense mode for all samples at once, as matrix products: with
// E_st = e^{LogW_t − ½|g_s−g_t|² − c_s} and the shifted factors Q_zt,
// Qp_zt = p(x*(t)) Q_zt,
//
//	SA = E Qpᵀ,  SG = E_blocks Qᵀ (same-set blocks),  val = log SG − log SA,
//
// and, for the gradient, C_st = E_st [1_same (aG Q)_st − (aA Qp)_st] with
// aG = Ω w/SG, aA = Ω w/SA, U = Q∘(aGᵀE)_blocks − Qp∘(aAᵀE), so that
// ∂α/∂G = G (C + Cᵀ) − G diag(rowsums + colsums of C) + Z U (the last term
// added by the caller through uz). It writes val and, if gg != nil, gg and
// uz, and returns α.
func (m *spMixture) denseAll(g, sq, qz []float64, base basePoints, val, gg, uz []float64, q int) float64 {
	n, nz := m.N, base.N
	e := getBuf(n * n)
	defer putBuf(e)
	gemm(true, false, 1, g, q, n, g, q, n, 0, e) // Gram matrix GᵀG
	for s := 0; s < n; s++ {
		row := e[s*n : (s+1)*n]
		cs := math.Inf(-1)
		for t, v := range row {
			a := m.LogW[t] - 0.5*(sq[s]+sq[t]-2*v)
			row[t] = a
			if a > cs {
				cs = a
			}
		}
		for t, a := range row {
			row[t] = math.Exp(a - cs)
		}
	}
	qp := make([]float64, nz*n)
	for z := 0; z < nz; z++ {
		for t := 0; t < n; t++ {
			qp[z*n+t] = m.PSet[m.Set[t]] * qz[z*n+t]
		}
	}
	sa := make([]float64, n*nz)
	gemm(false, true, 1, e, n, n, qp, nz, n, 0, sa)
	sg := make([]float64, n*nz)
	for set := range m.PSet {
		g0, g1 := m.Start[set], m.Start[set+1]
		w := g1 - g0
		if w == 0 {
			continue
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: w, Cols: w, Stride: n, Data: e[g0*n+g0:]},
			blas64.General{Rows: nz, Cols: w, Stride: n, Data: qz[g0:]},
			0, blas64.General{Rows: w, Cols: nz, Stride: nz, Data: sg[g0*nz:]})
	}
	alpha := 0.0
	for s := 0; s < n; s++ {
		for z := 0; z < nz; z++ {
			v := math.Log(sg[s*nz+z]) - math.Log(sa[s*nz+z])
			val[s*nz+z] = v
			alpha += m.Omega[s] * base.W[z] * v
		}
	}
	if gg == nil {
		return alpha
	}
	// aG, aA overwrite sg, sa.
	for s := 0; s < n; s++ {
		for z := 0; z < nz; z++ {
			wz := m.Omega[s] * base.W[z]
			sg[s*nz+z] = wz / sg[s*nz+z]
			sa[s*nz+z] = wz / sa[s*nz+z]
		}
	}
	c := getBuf(n * n)
	defer putBuf(c)
	gemm(false, false, -1, sa, n, nz, qp, nz, n, 0, c) // −aA Qp
	for set := range m.PSet {
		g0, g1 := m.Start[set], m.Start[set+1]
		w := g1 - g0
		if w == 0 {
			continue
		}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: w, Cols: nz, Stride: nz, Data: sg[g0*nz:]},
			blas64.General{Rows: nz, Cols: w, Stride: n, Data: qz[g0:]},
			1, blas64.General{Rows: w, Cols: w, Stride: n, Data: c[g0*n+g0:]})
	}
	for i, v := range e {
		c[i] *= v
	}
	// U = Q∘(aGᵀE)_blocks − Qp∘(aAᵀE).
	ua := make([]float64, nz*n)
	gemm(true, false, 1, sa, n, nz, e, n, n, 0, ua)
	ug := make([]float64, nz*n)
	for set := range m.PSet {
		g0, g1 := m.Start[set], m.Start[set+1]
		w := g1 - g0
		if w == 0 {
			continue
		}
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: w, Cols: nz, Stride: nz, Data: sg[g0*nz:]},
			blas64.General{Rows: w, Cols: w, Stride: n, Data: e[g0*n+g0:]},
			0, blas64.General{Rows: nz, Cols: w, Stride: n, Data: ug[g0:]})
	}
	for i := range uz[:nz*n] {
		uz[i] = qz[i]*ug[i] - qp[i]*ua[i]
	}
	// ∂α/∂G = G (C + Cᵀ) − G diag(rowsum + colsum).
	sums := make([]float64, n)
	for s := 0; s < n; s++ {
		for t := 0; t < n; t++ {
			v := c[s*n+t]
			sums[s] += v
			sums[t] += v
		}
	}
	for s := 0; s < n; s++ {
		for t := s + 1; t < n; t++ {
			v := c[s*n+t] + c[t*n+s]
			c[s*n+t], c[t*n+s] = v, v
		}
		c[s*n+s] *= 2
	}
	gemm(false, false, 1, g, q, n, c, n, n, 0, gg)
	for r := 0; r < q; r++ {
		for t := 0; t < n; t++ {
			gg[r*n+t] -= g[r*n+t] * sums[t]
		}
	}
	return alpha
}

// denseRow evaluates the terms of sample s in dense mode: val(s, z) for all
// z, its contribution to α, and (if crow != nil) ∂α/∂e_t accumulated into
// crow (over z) and uz (per z). d holds |g_s − g_t|², qz the shifted
// factors Q_zt; ev, pev are scratch.
func (m *spMixture) denseRow(s, g0, g1 int, d, qz, ev, pev []float64, base basePoints, val, crow, uz []float64) float64 {
	n, nz := m.N, base.N
	cs := math.Inf(-1)
	for t := 0; t < n; t++ {
		cs = math.Max(cs, m.LogW[t]-0.5*d[t])
	}
	for t := 0; t < n; t++ {
		e := math.Exp(m.LogW[t] - 0.5*d[t] - cs)
		ev[t] = e
		pev[t] = m.PSet[m.Set[t]] * e
	}
	alpha := 0.0
	for z := 0; z < nz; z++ {
		qr := qz[z*n : (z+1)*n]
		sumA := floats.Dot(pev, qr)
		sumG := floats.Dot(ev[g0:g1], qr[g0:g1])
		val[z] = math.Log(sumG) - math.Log(sumA)
		wz := m.Omega[s] * base.W[z]
		alpha += wz * val[z]
		if crow == nil {
			continue
		}
		aG, aA := wz/sumG, wz/sumA
		uzr := uz[z*n : (z+1)*n]
		for t, qv := range qr {
			c := -aA * pev[t] * qv
			if t >= g0 && t < g1 {
				c += aG * ev[t] * qv
			}
			uzr[t] += c
			crow[t] += c
		}
	}
	return alpha
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
func newSPMixture(sets []SampleSet, pstar []float64) (*spMixture, error) {
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
