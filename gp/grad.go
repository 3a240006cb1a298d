package gp

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// pointSet is a set of kernel centres (rows of x) with, for radial kernels,
// the rows scaled by 1/ℓ precomputed.
type pointSet struct {
	x  *mat.Dense
	xs []float64 // scaled rows (nil if the kernel is not radial)
	n  int
}

func newPointSet(k Kernel, X *mat.Dense) pointSet {
	n, _ := X.Dims()
	p := pointSet{x: X, n: n}
	if rk, ok := k.(radialKernel); ok {
		p.xs = scaleRows(X, rk.invLengths())
	}
	return p
}

// weightedGrad adds Σ_j w_j ∇_x k(x, P_j) to dst (len d). sx is x scaled
// by 1/ℓ (radial kernels only); tmp is scratch of len d. Entries with w_j
// = 0 are skipped.
func weightedGrad(k Kernel, dst, x, sx []float64, p pointSet, w, tmp []float64) {
	weightedGradK(k, dst, x, sx, p, w, nil, tmp)
}

// weightedGradK is weightedGrad given the kernel values kv_j = k(x, P_j)
// (nil if not at hand), which saves an exponential per point for radial
// kernels.
func weightedGradK(k Kernel, dst, x, sx []float64, p pointSet, w, kv, tmp []float64) {
	d := len(x)
	if rk, ok := k.(radialKernel); ok && p.xs != nil {
		// ∇_x k = 2 dk/d(r²) (x−y)/ℓ² = 2 dk/d(r²) (sx−sy) ⊙ (1/ℓ).
		acc := tmp[:d]
		clear(acc)
		for j, wj := range w {
			if wj == 0 {
				continue
			}
			sy := p.xs[j*d : j*d+d]
			var dk float64
			if kv != nil {
				dk = rk.dFromR2K(sqDist(sx, sy), kv[j])
			} else {
				_, dk = rk.dFromR2(sqDist(sx, sy))
			}
			c := 2 * wj * dk
			for i := range acc {
				acc[i] += c * (sx[i] - sy[i])
			}
		}
		for i, il := range rk.invLengths() {
			dst[i] += acc[i] * il
		}
		return
	}
	for j, wj := range w {
		if wj == 0 {
			continue
		}
		k.GradX(tmp, x, p.x.RawRowView(j))
		for i := 0; i < d; i++ {
			dst[i] += wj * tmp[i]
		}
	}
}

// MeanVarGrad returns the posterior mean and variance of f(x) (as MeanVar)
// and writes their gradients with respect to x into dMean and dVar (len d;
// either may be nil):
//
//	∇μ_x = Σ_j α_j ∇_x k(x, X_j),  ∇σ_x² = −2 Σ_j [(K+σ_n²I)⁻¹ k_Dx]_j ∇_x k(x, X_j).
//
// (∇_x k(x,x) = 0 for stationary kernels.) When the variance is clamped at
// 0 the unclamped gradient is still returned.
func (g *GP) MeanVarGrad(x []float64, dMean, dVar []float64) (mean, variance float64) {
	if len(x) != g.d {
		panic(fmt.Sprintf("gp: MeanVarGrad: x has length %d, GP has dimension %d", len(x), g.d))
	}
	n, d := g.n, g.d
	buf := g.getBuf()
	defer g.pool.Put(buf)
	k := buf.kb[:n]
	sx := g.scaleInto(buf.sx, x)
	g.kRowRange(k, sx, x, 0, n)
	var kv []float64 // kernel values for the gradients (the solve overwrites k)
	if g.rk != nil && (dMean != nil || dVar != nil) {
		if len(buf.kb) >= 2*n {
			kv = buf.kb[n : 2*n]
		} else {
			kv = make([]float64, n)
		}
		copy(kv, k)
	}
	mean = dot(k, g.alpha)
	g.chol.halfSolveVec(k)
	variance = math.Max(g.k.Variance()-dot(k, k), 0)
	tmp := buf.tmp
	ps := pointSet{x: g.x, xs: g.xs, n: n}
	if dMean != nil {
		clear(dMean[:d])
		weightedGradK(g.k, dMean, x, sx, ps, g.alpha, kv, tmp)
	}
	if dVar != nil {
		// r = L⁻ᵀ L⁻¹ k; dσ² = −2 Σ r_j ∇k_j.
		g.chol.halfSolveTVec(k)
		for i := range k {
			k[i] *= -2
		}
		clear(dVar[:d])
		weightedGradK(g.k, dVar, x, sx, ps, k, kv, tmp)
	}
	return mean, variance
}

// JointVJP is the reverse-mode gradient of Joint: for a scalar L(mean, cov)
// with gMean = ∂L/∂mean (len q, nil = 0) and gCov = ∂L/∂cov (q×q, every
// entry treated as free, nil = 0) it returns ∂L/∂X (q×d). With
// m = K_XD α and C = K_XX − K_XD K⁻¹ K_DX (K = K_DD + σ_n² I):
//
//	∂L/∂K_XD = gMean αᵀ − (gCov + gCovᵀ) K_XD K⁻¹,  ∂L/∂K_XX = gCov,
//
// chained through ∇_x k.
func (g *GP) JointVJP(X *mat.Dense, gMean []float64, gCov *mat.Dense) *mat.Dense {
	q, d := X.Dims()
	if d != g.d {
		panic(fmt.Sprintf("gp: JointVJP: X has %d columns, GP has dimension %d", d, g.d))
	}
	n := g.n
	out := mat.NewDense(q, d, nil)
	// wD = ∂L/∂K_XD (q×n).
	wD := make([]float64, q*n)
	if gMean != nil {
		for i := 0; i < q; i++ {
			for j := 0; j < n; j++ {
				wD[i*n+j] = gMean[i] * g.alpha[j]
			}
		}
	}
	var gs []float64 // gCov + gCovᵀ, q×q
	if gCov != nil {
		gs = symPart(gCov, q)
		kx := g.crossD(X)
		// kx ← K_XD K⁻¹ (rows are (K⁻¹ k_Dx)ᵀ).
		g.chol.rightSolveT(kx, q)
		g.chol.rightSolve(kx, q)
		gen := blas64.General{Rows: q, Cols: n, Stride: n, Data: kx}
		blas64.Gemm(blas.NoTrans, blas.NoTrans, -1,
			blas64.General{Rows: q, Cols: q, Stride: q, Data: gs}, gen,
			1, blas64.General{Rows: q, Cols: n, Stride: n, Data: wD})
	}
	ps := pointSet{x: g.x, xs: g.xs, n: n}
	var pX pointSet
	if gs != nil {
		pX = newPointSet(g.k, X)
	}
	sx := make([]float64, d)
	tmp := make([]float64, d)
	for i := 0; i < q; i++ {
		x := X.RawRowView(i)
		dst := out.RawRowView(i)
		s := g.scaleInto(sx, x)
		weightedGrad(g.k, dst, x, s, ps, wD[i*n:(i+1)*n], tmp)
		if gs != nil {
			// ∂/∂x_i of Σ_jl gCov_jl k(x_j, x_l) = Σ_j (gCov_ij + gCov_ji) ∇k(x_i, x_j).
			weightedGrad(g.k, dst, x, s, pX, gs[i*q:(i+1)*q], tmp)
		}
	}
	return out
}

// symPart returns G + Gᵀ (q×q row-major).
func symPart(G *mat.Dense, q int) []float64 {
	r, c := G.Dims()
	if r != q || c != q {
		panic(fmt.Sprintf("gp: covariance gradient is %d×%d, want %d×%d", r, c, q, q))
	}
	out := make([]float64, q*q)
	for i := 0; i < q; i++ {
		for j := 0; j < q; j++ {
			out[i*q+j] = G.At(i, j) + G.At(j, i)
		}
	}
	return out
}
