package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// Conditioned is a GP posterior that is additionally conditioned on the
// noise-free values f_X* at a finite set X* (paper Appendix C):
// p(f(x) | f_X*, y_D). It is built once per BO iteration by GP.Condition and
// then queried for many batches.
//
// Factorization. With t = [D; X*] and K₊ = K_tt + σ_n² Ĩ (noise only on the
// D block), the Cholesky factor of K₊ is assembled from the GP's existing
// factor L of K_DD + σ_n² I by a Schur complement:
//
//	L₊ = [ L     0  ]   V = L⁻¹ K_DX*  (n×s),
//	     [ Vᵀ    L̃ ]   L̃ L̃ᵀ = K̃ = K_X*X* − VᵀV,
//
// costing O(n² s + s³) instead of O((n+s)³). K̃ is exactly the posterior
// covariance of f_X* given y_D (Prior). Because f_X* is noise-free, K̃ is
// singular when X* holds duplicate or nearly duplicate points; it is then
// factorized with jitter escalation (see minJitter), which amounts to
// observing f_X* with a tiny noise of variance Jitter(), and Prior reports
// K̃ including that jitter so that all methods describe one Gaussian model.
type Conditioned struct {
	g      *GP
	xs     pointSet
	s      int
	v      []float64   // V = L⁻¹ K_DX*, n×s row-major
	gmat   []float64   // G = (K_DD+σ²I)⁻¹ K_DX* = L⁻ᵀ V, n×s
	lt     *cholFactor // factor of K̃ (+ jitter)
	mS     []float64   // m̃ = K_X*D α
	kTilde []float64   // K̃ + jitter·I, s×s
}

// Condition returns the posterior conditioned additionally on noise-free
// f at the rows of Xs (s×d, s ≥ 1). It errors if Xs is malformed or K̃
// stays indefinite with maximal jitter.
func (g *GP) Condition(Xs *mat.Dense) (*Conditioned, error) {
	if Xs == nil {
		return nil, fmt.Errorf("gp.Condition: nil X*: %w", errBadInput)
	}
	s, d := Xs.Dims()
	if d != g.d {
		return nil, fmt.Errorf("gp.Condition: X* has %d columns, GP has dimension %d: %w", d, g.d, errBadInput)
	}
	if err := checkFiniteDense(Xs, "X*"); err != nil {
		return nil, fmt.Errorf("gp.Condition: %w", err)
	}
	n := g.n
	Xs = mat.DenseCopyOf(Xs)
	c := &Conditioned{g: g, xs: newPointSet(g.k, Xs), s: s}
	// V (n×s) = L⁻¹ K_DX*: compute K_X*D (s×n) then right-solve with Lᵀ,
	// giving Vᵀ row-major; transpose to V.
	vt := g.crossD(Xs)
	c.mS = make([]float64, s)
	for i := range c.mS {
		c.mS[i] = dot(vt[i*n:(i+1)*n], g.alpha) // m̃ = K_X*D α
	}
	g.chol.rightSolveT(vt, s)
	c.v = transpose(vt, s, n)
	// K̃ = K_X*X* − VᵀV.
	kt := make([]float64, s*s)
	crossCovInto(g.k, kt, Xs, Xs)
	blas64.Syrk(blas.NoTrans, -1, blas64.General{Rows: s, Cols: n, Stride: n, Data: vt}, 1,
		blas64.Symmetric{Uplo: blas.Upper, N: s, Stride: s, Data: kt})
	for i := 0; i < s; i++ {
		for j := 0; j < i; j++ {
			kt[i*s+j] = kt[j*s+i]
		}
	}
	lt, err := choleskyJitter(kt, s)
	if err != nil {
		return nil, fmt.Errorf("gp.Condition: factorize posterior covariance of f at X* (|X*|=%d): %w", s, err)
	}
	for i := 0; i < s; i++ {
		kt[i*s+i] += lt.jitter
	}
	c.lt, c.kTilde = lt, kt
	// G = L⁻ᵀ V (n×s), used by PredictVJP.
	c.gmat = append([]float64(nil), c.v...)
	blas64.Trsm(blas.Left, blas.Trans, 1, g.chol.tri(), blas64.General{Rows: n, Cols: s, Stride: s, Data: c.gmat})
	return c, nil
}

func transpose(a []float64, r, c int) []float64 {
	out := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out[j*r+i] = a[i*c+j]
		}
	}
	return out
}

// jitter returns the jitter added to K̃'s diagonal (0 when well conditioned).
func (c *Conditioned) jitter() float64 { return c.lt.jitter }

// Prior returns p(f_X* | y_D) = N(m̃, K̃): m̃ = K_X*D (K_DD+σ_n²I)⁻¹ y and
// K̃ = K_X*X* − K_X*D (K_DD+σ_n²I)⁻¹ K_DX* (+ Jitter()·I). This is the
// distribution EP and p(x*|y_D) start from (Appendices A, B, D).
func (c *Conditioned) Prior() (mean []float64, cov *mat.SymDense) {
	return append([]float64(nil), c.mS...), mat.NewSymDense(c.s, append([]float64(nil), c.kTilde...))
}

// Predict returns, for a batch XB (q×d), p(f_B | f_X*, y_D) =
// N(A f_X* + b, S) (Appendix C, Eqs. (meanplus) and (varplus); Appendix E's
// a, b, σ²_{x|X*} generalised to a batch, the full q×q S, reading 4 of package tes):
//
//	A = C_BX* K̃⁻¹,  C_BX* = K_BX* − K_BD (K_DD+σ_n²I)⁻¹ K_DX*,
//	b = μ_B − A m̃,  S = K_BB − K_Bt K₊⁻¹ K_tB = C_BB − A C_X*B.
//
// A is q×s, b has length q, S is q×q (diagonal clamped at 0). For the noisy
// y_B add NoiseVar()·I to S. Cost O(q n² + q n s + q s² + q² (n+s)).
func (c *Conditioned) Predict(XB *mat.Dense) (A *mat.Dense, b []float64, S *mat.SymDense) {
	q, d := XB.Dims()
	if d != c.g.d {
		panic(fmt.Sprintf("gp: Conditioned.Predict: XB has %d columns, GP has dimension %d", d, c.g.d))
	}
	p := c.predict(XB)
	return mat.NewDense(q, c.s, p.a), p.b, mat.NewSymDense(q, p.sv)
}

// condPred holds the intermediate quantities of a conditioned prediction.
type condPred struct {
	q      int
	kd     []float64 // K_BD (q×n)
	vb     []float64 // K_BD L⁻ᵀ (q×n)
	w      []float64 // C_BX* L̃⁻ᵀ (q×s)
	a      []float64 // A = W L̃⁻¹ (q×s)
	b      []float64
	sv     []float64 // S (q×q)
	kbb    []float64 // K_BB (q×q)
	kBS    []float64 // K_BX* (q×s)
	meanDB []float64 // μ_B
}

func (c *Conditioned) predict(XB *mat.Dense) condPred {
	g := c.g
	q, _ := XB.Dims()
	n, s := g.n, c.s
	p := condPred{q: q}
	p.kd = g.crossD(XB)
	p.vb = append([]float64(nil), p.kd...)
	p.meanDB = make([]float64, q)
	for i := range p.meanDB {
		p.meanDB[i] = dot(p.kd[i*n:(i+1)*n], g.alpha)
	}
	g.chol.rightSolveT(p.vb, q)
	p.kBS = make([]float64, q*s)
	crossCovInto(g.k, p.kBS, XB, c.xs.x)
	// C_BX* = K_BX* − VB V  (q×s).
	p.w = append([]float64(nil), p.kBS...)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, -1,
		blas64.General{Rows: q, Cols: n, Stride: n, Data: p.vb},
		blas64.General{Rows: n, Cols: s, Stride: s, Data: c.v},
		1, blas64.General{Rows: q, Cols: s, Stride: s, Data: p.w})
	lt := c.lt.tri()
	wg := blas64.General{Rows: q, Cols: s, Stride: s, Data: p.w}
	blas64.Trsm(blas.Right, blas.Trans, 1, lt, wg) // W = C_BX* L̃⁻ᵀ
	p.a = append([]float64(nil), p.w...)
	blas64.Trsm(blas.Right, blas.NoTrans, 1, lt, blas64.General{Rows: q, Cols: s, Stride: s, Data: p.a})
	p.b = make([]float64, q)
	for i := range p.b {
		p.b[i] = p.meanDB[i] - dot(p.a[i*s:(i+1)*s], c.mS)
	}
	// S = K_BB − VB VBᵀ − W Wᵀ.
	p.kbb = make([]float64, q*q)
	crossCovInto(g.k, p.kbb, XB, XB)
	p.sv = append([]float64(nil), p.kbb...)
	sym := blas64.Symmetric{Uplo: blas.Upper, N: q, Stride: q, Data: p.sv}
	blas64.Syrk(blas.NoTrans, -1, blas64.General{Rows: q, Cols: n, Stride: n, Data: p.vb}, 1, sym)
	blas64.Syrk(blas.NoTrans, -1, wg, 1, sym)
	for i := 0; i < q; i++ {
		p.sv[i*q+i] = math.Max(p.sv[i*q+i], 0)
		for j := 0; j < i; j++ {
			p.sv[i*q+j] = p.sv[j*q+i]
		}
	}
	return p
}

// predictVJP is the reverse-mode gradient of Predict: given gA = ∂L/∂A
// (q×s), gb = ∂L/∂b (q) and gS = ∂L/∂S (q×q, every entry free), any of
// them nil for zero, it returns ∂L/∂XB (q×d). Writing A = K_BX* H + K_BD H_D
// with H = K̃⁻¹, H_D = −G K̃⁻¹, G = (K_DD+σ_n²I)⁻¹ K_DX*, and
// b = K_BX* c_* + K_BD c_D with c_* = −K̃⁻¹ m̃, c_D = α + G K̃⁻¹ m̃:
//
//	∂L/∂K_BX* = gA K̃⁻¹ + gb c_*ᵀ − [(gS+gSᵀ) K_Bt K₊⁻¹]_X*
//	∂L/∂K_BD  = −gA K̃⁻¹ Gᵀ + gb c_Dᵀ − [(gS+gSᵀ) K_Bt K₊⁻¹]_D
//	∂L/∂K_BB  = gS,
//
// chained through ∇_x k.
func (c *Conditioned) predictVJP(XB *mat.Dense, gA *mat.Dense, gb []float64, gS *mat.Dense) *mat.Dense {
	if _, d := XB.Dims(); d != c.g.d {
		panic(fmt.Sprintf("gp: Conditioned.PredictVJP: XB has %d columns, GP has dimension %d", d, c.g.d))
	}
	return c.vjp(XB, c.predict(XB), gA, gb, gS)
}

// PredictGrad returns Predict's A, b, S together with their reverse-mode
// gradient: vjp(gA, gb, gS) equals PredictVJP(XB, gA, gb, gS) but reuses
// the intermediate results of this prediction (about half the cost of a
// separate Predict + PredictVJP). vjp may be called several times; XB must
// not be modified in between.
func (c *Conditioned) PredictGrad(XB *mat.Dense) (A *mat.Dense, b []float64, S *mat.SymDense, vjp func(gA *mat.Dense, gb []float64, gS *mat.Dense) *mat.Dense) {
	q, d := XB.Dims()
	if d != c.g.d {
		panic(fmt.Sprintf("gp: Conditioned.PredictGrad: XB has %d columns, GP has dimension %d", d, c.g.d))
	}
	p := c.predict(XB)
	A = mat.NewDense(q, c.s, append([]float64(nil), p.a...))
	S = mat.NewSymDense(q, append([]float64(nil), p.sv...))
	b = append([]float64(nil), p.b...)
	return A, b, S, func(gA *mat.Dense, gb []float64, gS *mat.Dense) *mat.Dense {
		return c.vjp(XB, p, gA, gb, gS)
	}
}

// vjp is PredictVJP given the prediction intermediates p (read only).
func (c *Conditioned) vjp(XB *mat.Dense, p condPred, gA *mat.Dense, gb []float64, gS *mat.Dense) *mat.Dense {
	g := c.g
	q, d := XB.Dims()
	n, s := g.n, c.s
	wS := make([]float64, q*s) // ∂L/∂K_BX*
	wD := make([]float64, q*n) // ∂L/∂K_BD
	lt := c.lt.tri()
	if gA != nil {
		if r, cc := gA.Dims(); r != q || cc != s {
			panic(fmt.Sprintf("gp: PredictVJP: gA is %d×%d, want %d×%d", r, cc, q, s))
		}
		// gA K̃⁻¹ (q×s).
		for i := 0; i < q; i++ {
			copy(wS[i*s:(i+1)*s], gA.RawRowView(i))
		}
		wg := blas64.General{Rows: q, Cols: s, Stride: s, Data: wS}
		blas64.Trsm(blas.Right, blas.Trans, 1, lt, wg)
		blas64.Trsm(blas.Right, blas.NoTrans, 1, lt, wg)
		// −(gA K̃⁻¹) Gᵀ (q×n).
		blas64.Gemm(blas.NoTrans, blas.Trans, -1, wg,
			blas64.General{Rows: n, Cols: s, Stride: s, Data: c.gmat},
			0, blas64.General{Rows: q, Cols: n, Stride: n, Data: wD})
	}
	if gb != nil {
		// c_* = −K̃⁻¹ m̃, c_D = α − G c_*.
		cs := append([]float64(nil), c.mS...)
		c.lt.solveVec(cs)
		for i := range cs {
			cs[i] = -cs[i]
		}
		cd := append([]float64(nil), g.alpha...)
		blas64.Gemv(blas.NoTrans, -1, blas64.General{Rows: n, Cols: s, Stride: s, Data: c.gmat},
			blas64.Vector{N: s, Inc: 1, Data: cs}, 1, blas64.Vector{N: n, Inc: 1, Data: cd})
		for i := 0; i < q; i++ {
			for j := 0; j < s; j++ {
				wS[i*s+j] += gb[i] * cs[j]
			}
			for j := 0; j < n; j++ {
				wD[i*n+j] += gb[i] * cd[j]
			}
		}
	}
	var gs []float64
	if gS != nil {
		gs = symPart(gS, q)
		// R = K_Bt K₊⁻¹ in blocks: R_* = W L̃⁻¹ = A, R_D = (VB − A Vᵀ) L⁻¹.
		rd := append([]float64(nil), p.vb...)
		blas64.Gemm(blas.NoTrans, blas.Trans, -1,
			blas64.General{Rows: q, Cols: s, Stride: s, Data: p.a},
			blas64.General{Rows: n, Cols: s, Stride: s, Data: c.v},
			1, blas64.General{Rows: q, Cols: n, Stride: n, Data: rd})
		g.chol.rightSolve(rd, q)
		gsg := blas64.General{Rows: q, Cols: q, Stride: q, Data: gs}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, -1, gsg,
			blas64.General{Rows: q, Cols: s, Stride: s, Data: p.a},
			1, blas64.General{Rows: q, Cols: s, Stride: s, Data: wS})
		blas64.Gemm(blas.NoTrans, blas.NoTrans, -1, gsg,
			blas64.General{Rows: q, Cols: n, Stride: n, Data: rd},
			1, blas64.General{Rows: q, Cols: n, Stride: n, Data: wD})
	}
	out := mat.NewDense(q, d, nil)
	pD := pointSet{x: g.x, xs: g.xs, n: n}
	var pB pointSet
	if gs != nil {
		pB = newPointSet(g.k, XB)
	}
	sx := make([]float64, d)
	tmp := make([]float64, d)
	for i := 0; i < q; i++ {
		x := XB.RawRowView(i)
		dst := out.RawRowView(i)
		sxi := g.scaleInto(sx, x)
		weightedGradK(g.k, dst, x, sxi, pD, wD[i*n:(i+1)*n], p.kd[i*n:(i+1)*n], tmp)
		weightedGradK(g.k, dst, x, sxi, c.xs, wS[i*s:(i+1)*s], p.kBS[i*s:(i+1)*s], tmp)
		if gs != nil {
			weightedGradK(g.k, dst, x, sxi, pB, gs[i*q:(i+1)*q], p.kbb[i*q:(i+1)*q], tmp)
		}
	}
	return out
}
