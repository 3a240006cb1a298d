package tes

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/tesbo/tesbo/internal/linalg"
)

// epMixture is the query-independent part of TES_ep: for each retained x*,
// its probability P[i] and EP posterior N(Mu[i], Sig[i]) of f_X* (k
// entries, Sig row-major k×k).
type epMixture struct {
	K   int // |X*| (length of f_X*)
	P   []float64
	Mu  [][]float64
	Sig [][]float64
}

// gaussInfo evaluates α for the Gaussian mixture of Eq. (7)/App. E in its
// batch form (reading 4 of the package doc): component i is
//
//	q_ep(y_B | y_D, x*_i) = N(A μ_i + b, S + σ_n² I + A Σ_i Aᵀ),
//
// where the common offset b cancels. base[i] are component i's base points.
func (e *epMixture) gaussInfo(A []float64, q int, S []float64, noise float64, base []basePoints, grad bool) (mixResult, error) {
	if q == 1 {
		return e.gaussInfo1(A, S[0], noise, base, grad)
	}
	nc, k := len(e.P), e.K
	offs := make([]int, nc+1)
	for i := 0; i < nc; i++ {
		offs[i+1] = offs[i] + base[i].N
	}
	nt := offs[nc]
	ms := make([]float64, nc*q)   // m_i = A μ_i
	ls := make([]float64, nc*q*q) // L_i
	ts := make([]float64, nc*q*k) // T_i = A Σ_i (kept for the gradient)
	ld := make([]float64, nc)     // log det C_i
	c := make([]float64, q*q)
	for i := 0; i < nc; i++ {
		gemm(false, false, 1, A, q, k, e.Mu[i], k, 1, 0, ms[i*q:(i+1)*q])
		ti := ts[i*q*k : (i+1)*q*k]
		gemm(false, false, 1, A, q, k, e.Sig[i], k, k, 0, ti)
		copy(c, S)
		for r := 0; r < q; r++ {
			c[r*q+r] += noise
		}
		gemm(false, true, 1, ti, q, k, A, q, k, 1, c)
		symmetrize(c, q)
		li := ls[i*q*q : (i+1)*q*q]
		if _, err := linalg.Cholesky(li, c, q); err != nil {
			return mixResult{}, fmt.Errorf("predictive covariance of component %d: %w", i, err)
		}
		ld[i] = linalg.LogDet(li, q)
	}
	// Y (q×nt): block i = m_i 1ᵀ + L_i Z_i.
	y := make([]float64, q*nt)
	for i := 0; i < nc; i++ {
		n := base[i].N
		blk := blas64.General{Rows: q, Cols: n, Stride: nt, Data: y[offs[i]:]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			general(q, q, ls[i*q*q:(i+1)*q*q]), general(q, n, base[i].Z), 0, blk)
		for r := 0; r < q; r++ {
			row := y[r*nt+offs[i] : r*nt+offs[i]+n]
			for cc := range row {
				row[cc] += ms[i*q+r]
			}
		}
	}
	// ℓ_j(n) = log N(y_n; m_j, C_j) + (q/2) log 2π = −½ δᵀ C_j⁻¹ δ − ½ log|C_j|
	// with δ = y_n − m_j. R_j = C_j⁻¹ δ is formed by one matrix product with
	// the explicit inverse (C_j ≥ σ_n² I is well conditioned at this size),
	// which is faster here than two triangular solves and is kept as ∂ℓ/∂y
	// for the reverse pass.
	ell := make([]float64, nc*nt)
	invs := make([]float64, nc*q*q)
	var xs []float64
	if grad {
		xs = make([]float64, nc*q*nt)
	}
	x := make([]float64, q*nt)
	delta := make([]float64, q*nt)
	for j := 0; j < nc; j++ {
		if grad {
			x = xs[j*q*nt : (j+1)*q*nt]
		}
		for r := 0; r < q; r++ {
			m := ms[j*q+r]
			src, dst := y[r*nt:(r+1)*nt], delta[r*nt:(r+1)*nt]
			for cc, v := range src {
				dst[cc] = v - m
			}
		}
		inv := cholInverseTo(invs[j*q*q:(j+1)*q*q], ls[j*q*q:(j+1)*q*q], q)
		gemm(false, false, 1, inv, q, q, delta, q, nt, 0, x)
		ej := ell[j*nt : (j+1)*nt]
		for cc := range ej {
			ej[cc] = -0.5 * ld[j]
		}
		for r := 0; r < q; r++ {
			dr := delta[r*nt : (r+1)*nt]
			for cc, v := range x[r*nt : (r+1)*nt] {
				ej[cc] -= 0.5 * v * dr[cc]
			}
		}
	}
	logp := make([]float64, nc)
	for j := range logp {
		logp[j] = math.Log(e.P[j])
	}
	// Per point: val = ℓ_i − log Σ_j p_j e^{ℓ_j}; responsibilities π_j.
	val := make([]float64, nt)
	var pi []float64
	if grad {
		pi = make([]float64, nc*nt)
	}
	tmp := make([]float64, nc)
	alpha := 0.0
	for i := 0; i < nc; i++ {
		for n := offs[i]; n < offs[i+1]; n++ {
			for j := 0; j < nc; j++ {
				tmp[j] = logp[j] + ell[j*nt+n]
			}
			lse := logSumExp(tmp)
			val[n] = ell[i*nt+n] - lse
			alpha += e.P[i] * base[i].W[n-offs[i]] * val[n]
			if grad {
				for j := 0; j < nc; j++ {
					pi[j*nt+n] = math.Exp(tmp[j] - lse)
				}
			}
		}
	}
	res := mixResult{Alpha: alpha, SE: mixSE(e.P, base, offs, val)}
	if !grad {
		return res, nil
	}
	// Reverse pass. G_jn = ∂α/∂ℓ_j(n) = p_i w_n (δ_ji − π_jn): ≥ 0 for the
	// component's own points, ≤ 0 for the others. Columns with negligible
	// G_jn are skipped; ½ Σ_n G_jn R_n R_nᵀ is formed by two symmetric
	// rank-k updates (own points, others) on √|G|-scaled columns.
	gy := make([]float64, q*nt)
	gm := make([]float64, nc*q)
	gc := make([]float64, nc*q*q)
	rpos := make([]float64, q*nt)
	rneg := make([]float64, q*nt)
	gmax := 0.0
	for i := 0; i < nc; i++ {
		for _, w := range base[i].W {
			gmax = math.Max(gmax, e.P[i]*w)
		}
	}
	thr := 1e-14 * gmax
	var pos, neg []int
	var gpos, gneg []float64
	for j := 0; j < nc; j++ {
		rj := xs[j*q*nt : (j+1)*q*nt] // C_j⁻¹ (y − m_j)
		gsum := 0.0
		pos, neg, gpos, gneg = pos[:0], neg[:0], gpos[:0], gneg[:0]
		for i := 0; i < nc; i++ {
			for n := offs[i]; n < offs[i+1]; n++ {
				g := -pi[j*nt+n]
				if i == j {
					g++
				}
				g *= e.P[i] * base[i].W[n-offs[i]]
				gsum += g
				switch {
				case g > thr:
					pos, gpos = append(pos, n), append(gpos, g)
				case g < -thr:
					neg, gneg = append(neg, n), append(gneg, g)
				}
			}
		}
		// ∂ℓ_j/∂y = −R, ∂ℓ_j/∂m_j = R, ∂ℓ_j/∂C_j = ½(R Rᵀ − C_j⁻¹).
		for r := 0; r < q; r++ {
			rr := rj[r*nt : (r+1)*nt]
			gyr := gy[r*nt : (r+1)*nt]
			s := 0.0
			pr := rpos[r*len(pos) : (r+1)*len(pos)]
			for c, n := range pos {
				t := gpos[c] * rr[n]
				gyr[n] -= t
				s += t
				pr[c] = math.Sqrt(gpos[c]) * rr[n]
			}
			nr := rneg[r*len(neg) : (r+1)*len(neg)]
			for c, n := range neg {
				t := gneg[c] * rr[n]
				gyr[n] -= t
				s += t
				nr[c] = math.Sqrt(-gneg[c]) * rr[n]
			}
			gm[j*q+r] += s
		}
		gcj := gc[j*q*q : (j+1)*q*q]
		inv := invs[j*q*q : (j+1)*q*q]
		for a := range gcj {
			gcj[a] = -0.5 * gsum * inv[a]
		}
		c := blas64.Symmetric{Uplo: blas.Upper, N: q, Stride: q, Data: gcj}
		if len(pos) > 0 {
			blas64.Syrk(blas.NoTrans, 0.5, general(q, len(pos), rpos[:q*len(pos)]), 1, c)
		}
		if len(neg) > 0 {
			blas64.Syrk(blas.NoTrans, -0.5, general(q, len(neg), rneg[:q*len(neg)]), 1, c)
		}
		for a := 0; a < q; a++ { // mirror the upper triangle
			for b := a + 1; b < q; b++ {
				gcj[b*q+a] = gcj[a*q+b]
			}
		}
	}
	// y_n = m_i + L_i z_n.
	gL := make([]float64, q*q)
	for i := 0; i < nc; i++ {
		n := base[i].N
		for r := 0; r < q; r++ {
			s := 0.0
			for _, v := range gy[r*nt+offs[i] : r*nt+offs[i]+n] {
				s += v
			}
			gm[i*q+r] += s
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: q, Cols: n, Stride: nt, Data: gy[offs[i]:]},
			general(q, n, base[i].Z), 0, general(q, q, gL))
		gcl := cholVJP(ls[i*q*q:(i+1)*q*q], gL, q)
		gci := gc[i*q*q : (i+1)*q*q]
		for a := range gci {
			gci[a] += gcl[a]
		}
	}
	// m_i = A μ_i, C_i = S + σ²I + A Σ_i Aᵀ.
	res.GA = make([]float64, q*k)
	res.GS = make([]float64, q*q)
	for i := 0; i < nc; i++ {
		gemm(false, true, 1, gm[i*q:(i+1)*q], q, 1, e.Mu[i], k, 1, 1, res.GA)
		gci := gc[i*q*q : (i+1)*q*q]
		gemm(false, false, 2, gci, q, q, ts[i*q*k:(i+1)*q*k], q, k, 1, res.GA)
		for a := range gci {
			res.GS[a] += gci[a]
		}
	}
	return res, nil
}

// gaussInfo1 is gaussInfo for a single query point, in scalar arithmetic:
// component i is N(m_i, v_i) with m_i = aᵀμ_i, v_i = s + σ_n² + aᵀΣ_i a.
func (e *epMixture) gaussInfo1(a []float64, s, noise float64, base []basePoints, grad bool) (mixResult, error) {
	nc, k := len(e.P), e.K
	ms := make([]float64, nc)
	vs := make([]float64, nc)
	sa := make([]float64, nc*k) // Σ_i a
	for i := 0; i < nc; i++ {
		mu, sig := e.Mu[i], e.Sig[i]
		v := s + noise
		for r := 0; r < k; r++ {
			ms[i] += a[r] * mu[r]
			t := 0.0
			for c, x := range sig[r*k : (r+1)*k] {
				t += x * a[c]
			}
			sa[i*k+r] = t
			v += a[r] * t
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return mixResult{}, fmt.Errorf("predictive variance %g of component %d: %w", v, i, errIndefinite)
		}
		vs[i] = v
	}
	logp := make([]float64, nc)
	halfLogV := make([]float64, nc)
	for j := range logp {
		logp[j] = math.Log(e.P[j])
		halfLogV[j] = 0.5 * math.Log(vs[j])
	}
	tmp := make([]float64, nc)
	var res mixResult
	var gm, gv []float64
	if grad {
		gm = make([]float64, nc)
		gv = make([]float64, nc)
	}
	offs := make([]int, nc+1)
	for i := 0; i < nc; i++ {
		offs[i+1] = offs[i] + base[i].N
	}
	val := make([]float64, offs[nc])
	for i := 0; i < nc; i++ {
		sd := math.Sqrt(vs[i])
		b := base[i]
		for n, z := range b.Z[:b.N] {
			y := ms[i] + sd*z
			for j := 0; j < nc; j++ {
				d := y - ms[j]
				tmp[j] = logp[j] - 0.5*d*d/vs[j] - halfLogV[j]
			}
			lse := logSumExp(tmp)
			v := tmp[i] - logp[i] - lse
			val[offs[i]+n] = v
			w := e.P[i] * b.W[n]
			res.Alpha += w * v
			if !grad {
				continue
			}
			// ∂α/∂ℓ_j = w (δ_ij − π_j); ℓ_j = −½(y−m_j)²/v_j − ½ log v_j.
			gy := 0.0
			for j := 0; j < nc; j++ {
				g := -math.Exp(tmp[j] - lse)
				if j == i {
					g++
				}
				g *= w
				r := (y - ms[j]) / vs[j]
				gy -= g * r
				gm[j] += g * r
				gv[j] += 0.5 * g * (r*r - 1/vs[j])
			}
			// y = m_i + √v_i z.
			gm[i] += gy
			gv[i] += gy * z / (2 * sd)
		}
	}
	res.SE = mixSE(e.P, base, offs, val)
	if !grad {
		return res, nil
	}
	res.GA = make([]float64, k)
	res.GS = []float64{0}
	for i := 0; i < nc; i++ {
		for r := 0; r < k; r++ {
			res.GA[r] += gm[i]*e.Mu[i][r] + 2*gv[i]*sa[i*k+r]
		}
		res.GS[0] += gv[i]
	}
	return res, nil
}

// mixSE returns the Monte-Carlo standard error of α = Σ_i p_i Σ_n w_n val_n
// (0 when every component uses quadrature); antithetic pairs are the
// independent units.
func mixSE(p []float64, base []basePoints, offs []int, val []float64) float64 {
	v := 0.0
	for i := range p {
		b := base[i]
		if b.Quad {
			continue
		}
		u := b.N
		step := 1
		if b.Pairs {
			u, step = b.N/2, 2
		}
		if u < 2 {
			continue
		}
		mean := 0.0
		vals := make([]float64, 0, u)
		for c := 0; c < b.N; c += step {
			x := val[offs[i]+c]
			if step == 2 {
				x = 0.5 * (x + val[offs[i]+c+1])
			}
			vals = append(vals, x)
			mean += x
		}
		mean /= float64(u)
		ss := 0.0
		for _, x := range vals {
			ss += (x - mean) * (x - mean)
		}
		v += p[i] * p[i] * ss / float64(u-1) / float64(u)
	}
	return math.Sqrt(v)
}
