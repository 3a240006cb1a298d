package tes

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"
)

// chooseDense decides dense mode. Where the samples overlap (the query is
// weakly informative) nearly every term of every log-sum-exp matters and the
// windowed or pruned loops cost |F|²·n_z exponentials. There the terms
// factor, e^{LogW_t − ½d_st + zᵀg_t} = E_st·Q_zt, so each sum is a dot
// product: |F| exponentials per s instead of |F|·n_z. The factorization is
// safe when zᵀg_t spans at most 200 nats (no factor underflows while its
// product still matters) and the own sample's weight is within e^60 of the
// largest (so it bounds the sums away from underflow; checked per sample).
func (m *spMixture) chooseDense(w *spWork) bool {
	n := w.n
	dense := true
	for z := 0; z < w.nz && dense; z++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range w.pz[z*n : (z+1)*n] {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
		dense = hi-lo <= 200
	}
	if w.q == 1 && dense && m.mode == 0 {
		// Windowed mode costs ~n_z·W exponentials per sample (W = window
		// size), dense mode ~|F| plus 4·n_z·|F| flops (~|F|·n_z/2
		// exponentials' worth): prefer windows when they hold under half of
		// the samples.
		wsum := 0
		for s := 0; s < n; s++ {
			rad := math.Sqrt(2 * (pruneLog + w.maxLW - m.LogW[s]))
			lo := sort.SearchFloat64s(w.gsorted, w.g[s]-rad)
			hi := sort.SearchFloat64s(w.gsorted, w.g[s]+rad)
			wsum += hi - lo
		}
		dense = 2*wsum > n*n
	}
	return dense && m.mode >= 0
}

// denseFactors forms dense mode's shifted factors
// Q_zt = e^{zᵀg_t − max_t' zᵀg_t'} and denseRow's scratch.
func (w *spWork) denseFactors() {
	n := w.n
	w.qz = make([]float64, w.nz*n)
	for z := 0; z < w.nz; z++ {
		row := w.pz[z*n : (z+1)*n]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
		}
		for t, v := range row {
			w.qz[z*n+t] = math.Exp(v - mx)
		}
	}
	w.ev = make([]float64, n)
	w.pev = make([]float64, n)
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
	n := m.N
	e := getBuf(n * n)
	defer putBuf(e)
	m.denseWeights(e, g, sq, q)
	qp, sa, sg, alpha := m.denseValues(e, qz, base, val)
	if gg == nil {
		return alpha
	}
	m.denseGrad(e, qz, qp, sa, sg, g, base, gg, uz, q)
	return alpha
}

// denseWeights fills e (n×n) with E_st = e^{LogW_t − ½|g_s−g_t|² − c_s},
// c_s the row's largest exponent.
func (m *spMixture) denseWeights(e, g, sq []float64, q int) {
	n := m.N
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
}

// denseValues computes Qp, SA = E Qpᵀ and SG = E_blocks Qᵀ, writes
// val = log SG − log SA and returns them with α.
func (m *spMixture) denseValues(e, qz []float64, base basePoints, val []float64) (qp, sa, sg []float64, alpha float64) {
	n, nz := m.N, base.N
	qp = make([]float64, nz*n)
	for z := 0; z < nz; z++ {
		for t := 0; t < n; t++ {
			qp[z*n+t] = m.PSet[m.Set[t]] * qz[z*n+t]
		}
	}
	sa = make([]float64, n*nz)
	gemm(false, true, 1, e, n, n, qp, nz, n, 0, sa)
	sg = make([]float64, n*nz)
	m.eachBlock(func(g0, w int) {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: w, Cols: w, Stride: n, Data: e[g0*n+g0:]},
			blas64.General{Rows: nz, Cols: w, Stride: n, Data: qz[g0:]},
			0, blas64.General{Rows: w, Cols: nz, Stride: nz, Data: sg[g0*nz:]})
	})
	alpha = 0.0
	for s := 0; s < n; s++ {
		for z := 0; z < nz; z++ {
			v := math.Log(sg[s*nz+z]) - math.Log(sa[s*nz+z])
			val[s*nz+z] = v
			alpha += m.Omega[s] * base.W[z] * v
		}
	}
	return qp, sa, sg, alpha
}

// denseGrad writes gg = ∂α/∂G (but for the Z U term) and uz = U from
// denseValues' results (sa and sg are overwritten).
func (m *spMixture) denseGrad(e, qz, qp, sa, sg, g []float64, base basePoints, gg, uz []float64, q int) {
	n, nz := m.N, base.N
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
	m.eachBlock(func(g0, w int) {
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			blas64.General{Rows: w, Cols: nz, Stride: nz, Data: sg[g0*nz:]},
			blas64.General{Rows: nz, Cols: w, Stride: n, Data: qz[g0:]},
			1, blas64.General{Rows: w, Cols: w, Stride: n, Data: c[g0*n+g0:]})
	})
	for i, v := range e {
		c[i] *= v
	}
	// U = Q∘(aGᵀE)_blocks − Qp∘(aAᵀE).
	ua := make([]float64, nz*n)
	gemm(true, false, 1, sa, n, nz, e, n, n, 0, ua)
	ug := make([]float64, nz*n)
	m.eachBlock(func(g0, w int) {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1,
			blas64.General{Rows: w, Cols: nz, Stride: nz, Data: sg[g0*nz:]},
			blas64.General{Rows: w, Cols: w, Stride: n, Data: e[g0*n+g0:]},
			0, blas64.General{Rows: nz, Cols: w, Stride: n, Data: ug[g0:]})
	})
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
