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
// The steps: the components' moments and Cholesky factors (epMoments), the
// base points mapped through them (draw), every component's log-density at
// every point (logLik), the value and responsibilities (value), and for the
// gradient the reverse pass through the log-densities (reverseLik), the draws
// (reverseDraw) and the moments (reverseMoments).
func (e *epMixture) gaussInfo(A []float64, q int, S []float64, noise float64, base []basePoints, grad bool) (mixResult, error) {
	if q == 1 {
		return e.gaussInfo1(A, S[0], noise, base, grad)
	}
	w, err := e.epMoments(A, q, S, noise, base)
	if err != nil {
		return mixResult{}, err
	}
	w.draw(base)
	w.logLik(grad)
	alpha := e.value(w, base, grad)
	res := mixResult{Alpha: alpha, SE: mixSE(e.P, base, w.offs, w.val)}
	if !grad {
		return res, nil
	}
	gy, gm, gc := e.reverseLik(w, base)
	w.reverseDraw(base, gy, gm, gc)
	res.GA, res.GS = e.reverseMoments(w, gm, gc)
	return res, nil
}

// epWork holds the intermediate arrays of one gaussInfo evaluation: q batch
// points, k = |X*|, nc components and nt base points in all (component i's
// in columns [offs[i], offs[i+1]) of the q×nt matrices).
type epWork struct {
	q, k, nc, nt int
	offs         []int
	ms           []float64 // m_i = A μ_i (nc×q)
	ls           []float64 // L_i, L_i L_iᵀ = C_i (nc×q×q)
	ts           []float64 // T_i = A Σ_i (nc×q×k, kept for the gradient)
	ld           []float64 // log det C_i
	y            []float64 // Y (q×nt)
	ell          []float64 // ℓ_j(n) (nc×nt)
	invs         []float64 // C_j⁻¹ (nc×q×q)
	xs           []float64 // R_j = C_j⁻¹ (Y − m_j 1ᵀ) (nc×q×nt, gradient only)
	val          []float64 // ℓ_i(n) − log Σ_j p_j e^{ℓ_j(n)} for n of component i
	pi           []float64 // responsibilities π_jn (nc×nt, gradient only)
}

// epMoments returns the components' predictive moments: m_i = A μ_i and the
// Cholesky factor of C_i = S + σ_n² I + A Σ_i Aᵀ (Eq. (7)/App. E), with
// log det C_i.
func (e *epMixture) epMoments(A []float64, q int, S []float64, noise float64, base []basePoints) (*epWork, error) {
	nc, k := len(e.P), e.K
	w := &epWork{q: q, k: k, nc: nc, offs: make([]int, nc+1)}
	for i := 0; i < nc; i++ {
		w.offs[i+1] = w.offs[i] + base[i].N
	}
	w.nt = w.offs[nc]
	w.ms = make([]float64, nc*q)
	w.ls = make([]float64, nc*q*q)
	w.ts = make([]float64, nc*q*k)
	w.ld = make([]float64, nc)
	c := make([]float64, q*q)
	for i := 0; i < nc; i++ {
		gemm(false, false, 1, A, q, k, e.Mu[i], k, 1, 0, w.ms[i*q:(i+1)*q])
		ti := w.ts[i*q*k : (i+1)*q*k]
		gemm(false, false, 1, A, q, k, e.Sig[i], k, k, 0, ti)
		copy(c, S)
		for r := 0; r < q; r++ {
			c[r*q+r] += noise
		}
		gemm(false, true, 1, ti, q, k, A, q, k, 1, c)
		symmetrize(c, q)
		li := w.ls[i*q*q : (i+1)*q*q]
		if _, err := linalg.Cholesky(li, c, q); err != nil {
			return nil, fmt.Errorf("predictive covariance of component %d: %w", i, err)
		}
		w.ld[i] = linalg.LogDet(li, q)
	}
	return w, nil
}

// draw maps the base points through the components: block i of Y (q×nt) is
// m_i 1ᵀ + L_i Z_i, so y_n ~ N(m_i, C_i) for component i's points.
func (w *epWork) draw(base []basePoints) {
	q, nt := w.q, w.nt
	w.y = make([]float64, q*nt)
	for i := 0; i < w.nc; i++ {
		n := base[i].N
		blk := blas64.General{Rows: q, Cols: n, Stride: nt, Data: w.y[w.offs[i]:]}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, 1,
			general(q, q, w.ls[i*q*q:(i+1)*q*q]), general(q, n, base[i].Z), 0, blk)
		for r := 0; r < q; r++ {
			row := w.y[r*nt+w.offs[i] : r*nt+w.offs[i]+n]
			for cc := range row {
				row[cc] += w.ms[i*q+r]
			}
		}
	}
}

// logLik fills ℓ_j(n) = log N(y_n; m_j, C_j) + (q/2) log 2π
// = −½ δᵀ C_j⁻¹ δ − ½ log|C_j| with δ = y_n − m_j. R_j = C_j⁻¹ δ is formed
// by one matrix product with the explicit inverse (C_j ≥ σ_n² I is well
// conditioned at this size), which is faster here than two triangular
// solves and is kept as ∂ℓ/∂y for the reverse pass when grad is set.
func (w *epWork) logLik(grad bool) {
	q, nt, nc := w.q, w.nt, w.nc
	w.ell = make([]float64, nc*nt)
	w.invs = make([]float64, nc*q*q)
	if grad {
		w.xs = make([]float64, nc*q*nt)
	}
	x := make([]float64, q*nt)
	delta := make([]float64, q*nt)
	for j := 0; j < nc; j++ {
		if grad {
			x = w.xs[j*q*nt : (j+1)*q*nt]
		}
		for r := 0; r < q; r++ {
			m := w.ms[j*q+r]
			src, dst := w.y[r*nt:(r+1)*nt], delta[r*nt:(r+1)*nt]
			for cc, v := range src {
				dst[cc] = v - m
			}
		}
		inv := cholInverseTo(w.invs[j*q*q:(j+1)*q*q], w.ls[j*q*q:(j+1)*q*q], q)
		gemm(false, false, 1, inv, q, q, delta, q, nt, 0, x)
		ej := w.ell[j*nt : (j+1)*nt]
		for cc := range ej {
			ej[cc] = -0.5 * w.ld[j]
		}
		for r := 0; r < q; r++ {
			dr := delta[r*nt : (r+1)*nt]
			for cc, v := range x[r*nt : (r+1)*nt] {
				ej[cc] -= 0.5 * v * dr[cc]
			}
		}
	}
}

// value returns α = Σ_i p_i Σ_n w_n val_n with, for component i's points,
// val_n = ℓ_i(n) − log Σ_j p_j e^{ℓ_j(n)} (the log-ratio of the package's
// information-gain form), and with grad the responsibilities
// π_jn = p_j e^{ℓ_j(n)} / Σ_j' p_j' e^{ℓ_j'(n)}.
func (e *epMixture) value(w *epWork, base []basePoints, grad bool) float64 {
	nc, nt := w.nc, w.nt
	logp := make([]float64, nc)
	for j := range logp {
		logp[j] = math.Log(e.P[j])
	}
	w.val = make([]float64, nt)
	if grad {
		w.pi = make([]float64, nc*nt)
	}
	tmp := make([]float64, nc)
	alpha := 0.0
	for i := 0; i < nc; i++ {
		for n := w.offs[i]; n < w.offs[i+1]; n++ {
			for j := 0; j < nc; j++ {
				tmp[j] = logp[j] + w.ell[j*nt+n]
			}
			lse := logSumExp(tmp)
			w.val[n] = w.ell[i*nt+n] - lse
			alpha += e.P[i] * base[i].W[n-w.offs[i]] * w.val[n]
			if grad {
				for j := 0; j < nc; j++ {
					w.pi[j*nt+n] = math.Exp(tmp[j] - lse)
				}
			}
		}
	}
	return alpha
}

// epReverse is the scratch of reverseLik: the points of one component j
// with positive and negative G_jn, their G_jn, and the √|G|-scaled columns
// of R_j.
type epReverse struct {
	pos, neg   []int
	gpos, gneg []float64
	rpos, rneg []float64
}

// reverseLik is the reverse pass through the log-densities. With
// G_jn = ∂α/∂ℓ_j(n) = p_i w_n (δ_ji − π_jn) (≥ 0 for the component's own
// points, ≤ 0 for the others) it returns ∂α/∂Y (q×nt), ∂α/∂m_j (nc×q) and
// ∂α/∂C_j (nc×q×q), from ∂ℓ_j/∂y = −R, ∂ℓ_j/∂m_j = R and
// ∂ℓ_j/∂C_j = ½(R Rᵀ − C_j⁻¹). Points with |G_jn| below 1e-14 of the
// largest p_i w_n are skipped.
func (e *epMixture) reverseLik(w *epWork, base []basePoints) (gy, gm, gc []float64) {
	q, nc, nt := w.q, w.nc, w.nt
	gy = make([]float64, q*nt)
	gm = make([]float64, nc*q)
	gc = make([]float64, nc*q*q)
	sc := &epReverse{rpos: make([]float64, q*nt), rneg: make([]float64, q*nt)}
	gmax := 0.0
	for i := 0; i < nc; i++ {
		for _, wt := range base[i].W {
			gmax = math.Max(gmax, e.P[i]*wt)
		}
	}
	thr := 1e-14 * gmax
	for j := 0; j < nc; j++ {
		gsum := e.splitG(w, base, j, thr, sc)
		w.reverseComponent(j, gsum, sc, gy, gm, gc)
	}
	return gy, gm, gc
}

// splitG collects component j's G_jn = p_i w_n (δ_ji − π_jn) above thr in
// magnitude into sc's positive and negative lists and returns Σ_n G_jn.
func (e *epMixture) splitG(w *epWork, base []basePoints, j int, thr float64, sc *epReverse) float64 {
	gsum := 0.0
	sc.pos, sc.neg, sc.gpos, sc.gneg = sc.pos[:0], sc.neg[:0], sc.gpos[:0], sc.gneg[:0]
	for i := 0; i < w.nc; i++ {
		for n := w.offs[i]; n < w.offs[i+1]; n++ {
			g := -w.pi[j*w.nt+n]
			if i == j {
				g++
			}
			g *= e.P[i] * base[i].W[n-w.offs[i]]
			gsum += g
			switch {
			case g > thr:
				sc.pos, sc.gpos = append(sc.pos, n), append(sc.gpos, g)
			case g < -thr:
				sc.neg, sc.gneg = append(sc.neg, n), append(sc.gneg, g)
			}
		}
	}
	return gsum
}

// reverseComponent adds component j's share of the reverse pass:
// ∂α/∂y_n −= G_jn R_n, ∂α/∂m_j += Σ_n G_jn R_n and
// ∂α/∂C_j = ½ Σ_n G_jn R_n R_nᵀ − ½ (Σ_n G_jn) C_j⁻¹, the sum formed by two
// symmetric rank-k updates (own points, others) on √|G|-scaled columns.
func (w *epWork) reverseComponent(j int, gsum float64, sc *epReverse, gy, gm, gc []float64) {
	q, nt := w.q, w.nt
	rj := w.xs[j*q*nt : (j+1)*q*nt] // C_j⁻¹ (y − m_j)
	pos, neg, gpos, gneg := sc.pos, sc.neg, sc.gpos, sc.gneg
	for r := 0; r < q; r++ {
		rr := rj[r*nt : (r+1)*nt]
		gyr := gy[r*nt : (r+1)*nt]
		s := 0.0
		pr := sc.rpos[r*len(pos) : (r+1)*len(pos)]
		for c, n := range pos {
			t := gpos[c] * rr[n]
			gyr[n] -= t
			s += t
			pr[c] = math.Sqrt(gpos[c]) * rr[n]
		}
		nr := sc.rneg[r*len(neg) : (r+1)*len(neg)]
		for c, n := range neg {
			t := gneg[c] * rr[n]
			gyr[n] -= t
			s += t
			nr[c] = math.Sqrt(-gneg[c]) * rr[n]
		}
		gm[j*q+r] += s
	}
	gcj := gc[j*q*q : (j+1)*q*q]
	inv := w.invs[j*q*q : (j+1)*q*q]
	for a := range gcj {
		gcj[a] = -0.5 * gsum * inv[a]
	}
	c := blas64.Symmetric{Uplo: blas.Upper, N: q, Stride: q, Data: gcj}
	if len(pos) > 0 {
		blas64.Syrk(blas.NoTrans, 0.5, general(q, len(pos), sc.rpos[:q*len(pos)]), 1, c)
	}
	if len(neg) > 0 {
		blas64.Syrk(blas.NoTrans, -0.5, general(q, len(neg), sc.rneg[:q*len(neg)]), 1, c)
	}
	for a := 0; a < q; a++ { // mirror the upper triangle
		for b := a + 1; b < q; b++ {
			gcj[b*q+a] = gcj[a*q+b]
		}
	}
}

// reverseDraw propagates ∂α/∂Y through y_n = m_i + L_i z_n: it adds
// Σ_n ∂α/∂y_n to ∂α/∂m_i and, through the Cholesky factor's
// vector–Jacobian product, ∂α/∂L_i = Σ_n ∂α/∂y_n z_nᵀ to ∂α/∂C_i.
func (w *epWork) reverseDraw(base []basePoints, gy, gm, gc []float64) {
	q, nt := w.q, w.nt
	gL := make([]float64, q*q)
	for i := 0; i < w.nc; i++ {
		n := base[i].N
		for r := 0; r < q; r++ {
			s := 0.0
			for _, v := range gy[r*nt+w.offs[i] : r*nt+w.offs[i]+n] {
				s += v
			}
			gm[i*q+r] += s
		}
		blas64.Gemm(blas.NoTrans, blas.Trans, 1,
			blas64.General{Rows: q, Cols: n, Stride: nt, Data: gy[w.offs[i]:]},
			general(q, n, base[i].Z), 0, general(q, q, gL))
		gcl := linalg.CholeskyVJP(w.ls[i*q*q:(i+1)*q*q], gL, q)
		gci := gc[i*q*q : (i+1)*q*q]
		for a := range gci {
			gci[a] += gcl[a]
		}
	}
}

// reverseMoments returns ∂α/∂A and ∂α/∂S from m_i = A μ_i and
// C_i = S + σ_n² I + A Σ_i Aᵀ: ∂A = Σ_i ∂m_i μ_iᵀ + 2 ∂C_i A Σ_i and
// ∂S = Σ_i ∂C_i (∂C_i symmetric).
func (e *epMixture) reverseMoments(w *epWork, gm, gc []float64) (ga, gs []float64) {
	q, k := w.q, w.k
	ga = make([]float64, q*k)
	gs = make([]float64, q*q)
	for i := 0; i < w.nc; i++ {
		gemm(false, true, 1, gm[i*q:(i+1)*q], q, 1, e.Mu[i], k, 1, 1, ga)
		gci := gc[i*q*q : (i+1)*q*q]
		gemm(false, false, 2, gci, q, q, w.ts[i*q*k:(i+1)*q*k], q, k, 1, ga)
		for a := range gci {
			gs[a] += gci[a]
		}
	}
	return ga, gs
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
