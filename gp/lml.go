package gp

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

// logMarginalLikelihoodGrad returns ∂ log p(y|X,θ)/∂θ for θ = [kernel log
// params..., log σ_n²] (len NumParams()+1):
//
//	∂/∂θ_j = ½ tr((ααᵀ − (K+σ_n²I)⁻¹) ∂(K+σ_n²I)/∂θ_j),
//
// with ∂(σ_n² I)/∂ log σ_n² = σ_n² I. Costs O(n³) for the explicit inverse.
//
// It is the gradient of logMarginalLikelihood() as computed: it reuses the
// GP's own factor, so if the factorization needed a diagonal jitter
// (Jitter()) the gradient is that of the jittered likelihood, with the
// jitter moving with the hyper-parameters as the escalation defines it
// (see lmlGrad). It returns an error, never a NaN or zero gradient, if the
// explicit inverse fails (wrapping errNotPositiveDefinite) or the gradient
// is not finite.
func (g *GP) logMarginalLikelihoodGrad() ([]float64, error) {
	grad := make([]float64, g.k.NumParams()+1)
	if _, err := lmlGrad(g.k, g.noise, g.x, g.y, true, grad, nil, g.chol); err != nil {
		return nil, fmt.Errorf("gp: log marginal likelihood gradient (n=%d): %w", g.n, err)
	}
	return grad, nil
}

// lmlGrad computes the log marginal likelihood and its gradient (grad, len
// NumParams()+1; the last entry is for log σ_n² and is left 0 unless
// withNoise). ws supplies reusable buffers (nil allocates). fac, if
// non-nil, is the already computed factor of K_DD + σ_n² I (+ jitter) for
// exactly these arguments; otherwise the matrix is factorized with jitter
// escalation.
//
// Jitter. The factored matrix is A = K + σ_n² I + jI. The escalation
// chooses j = c · mean(diag(K + σ_n² I)) with a discrete level c, so within
// a level j moves with θ and ∂A/∂θ_t carries the extra diagonal
// c · ∂mean(diag)/∂θ_t · I: ∂mean(diag)/∂ log σ_n² = σ_n², ∂/∂ log σ_s² =
// σ_s² for this package's kernels (mean of ParamGrad(x_i, x_i) for others).
// The gradient is thus exact for the value returned, which includes j.
func lmlGrad(k Kernel, noise float64, X *mat.Dense, y []float64, withNoise bool, grad []float64, ws *lmlEval, fac *cholFactor) (float64, error) {
	n, d := X.Dims()
	if ws == nil {
		ws = &lmlEval{
			kbuf: make([]float64, n*n), lbuf: make([]float64, n*n),
			xs: make([]float64, n*d), alpha: make([]float64, n),
			ptmp: make([]float64, k.NumParams()), dtmp: make([]float64, k.NumParams()),
		}
	}
	K := ws.kbuf // K_DD (+σ² on the diagonal); the factor goes to ws.lbuf
	rk, radial := k.(radialKernel)
	lmlKernelMatrix(k, rk, radial, X, ws)
	for i := 0; i < n; i++ {
		K[i*n+i] += noise
	}
	var c *cholFactor
	if fac != nil {
		copy(ws.lbuf, fac.l[:n*n])
		c = &cholFactor{n: n, l: ws.lbuf, jitter: fac.jitter, jitterRel: fac.jitterRel}
	} else {
		var err error
		if c, err = choleskyJitterBuf(K, n, ws.lbuf); err != nil {
			return 0, err
		}
	}
	alpha := ws.alpha
	copy(alpha, y)
	c.solveVec(alpha)
	lml := -0.5*dot(alpha, y) - 0.5*c.logDet() - 0.5*float64(n)*math.Log(2*math.Pi)
	clear(grad)
	// W = ααᵀ − K⁻¹ (lower triangle), overwriting the factor.
	if !linalg.Inverse(c.l, c.n) {
		return 0, fmt.Errorf("invert K+σ²I: %w", errNotPositiveDefinite)
	}
	W := c.l
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			W[i*n+j] = alpha[i]*alpha[j] - W[i*n+j]
		}
	}
	np := k.NumParams()
	s2 := k.Variance()
	var trW float64
	for i := 0; i < n; i++ {
		trW += W[i*n+i]
	}
	if radial {
		radialLMLGrad(rk, ws, K, W, n, d, trW, s2, c.jitterRel, grad)
	} else {
		kernelLMLGrad(k, X, ws, W, n, np, trW, c.jitterRel, grad)
	}
	if withNoise {
		grad[np] = 0.5 * trW * noise * (1 + c.jitterRel)
	}
	if math.IsNaN(lml) || !finite(grad) {
		return 0, errors.New("non-finite log marginal likelihood")
	}
	return lml, nil
}

// lmlKernelMatrix fills the lower triangle of ws.kbuf with K_DD; for a
// radial kernel (rk, radial) through the inputs scaled by the inverse
// length-scales, which it leaves in ws.xs for radialLMLGrad.
func lmlKernelMatrix(k Kernel, rk radialKernel, radial bool, X *mat.Dense, ws *lmlEval) {
	n, d := X.Dims()
	K := ws.kbuf
	if radial {
		inv := rk.invLengths()
		for i := 0; i < n; i++ {
			row := X.RawRowView(i)
			for j := 0; j < d; j++ {
				ws.xs[i*d+j] = row[j] * inv[j]
			}
		}
		for i := 0; i < n; i++ {
			radialRow(rk, K[i*n:i*n+i+1], ws.xs[i*d:(i+1)*d], ws.xs[:(i+1)*d], d)
		}
	} else {
		for i := 0; i < n; i++ {
			xi := X.RawRowView(i)
			for j := 0; j <= i; j++ {
				K[i*n+j] = k.Eval(xi, X.RawRowView(j))
			}
		}
	}
}

// radialLMLGrad writes lmlGrad's gradient for a radial kernel into grad:
// ½ Σ_ab W_ab ∂K_ab/∂θ for the d log length-scales and (grad[d]) the log
// signal variance s2, with the jitter's share (jitterRel) and the diagonal
// through trW = tr W; ws.xs holds the scaled inputs.
func radialLMLGrad(rk radialKernel, ws *lmlEval, K, W []float64, n, d int, trW, s2, jitterRel float64, grad []float64) {
	// ½ Σ_ab W_ab ∂K_ab: off-diagonal pairs counted twice.
	gl := grad[:d]
	var gs float64
	for i := 0; i < n; i++ {
		xi := ws.xs[i*d : (i+1)*d]
		for j := 0; j < i; j++ {
			w := W[i*n+j]
			xj := ws.xs[j*d : (j+1)*d]
			kv := K[i*n+j]
			dk := rk.dFromR2K(sqDist(xi, xj), kv)
			gs += w * kv
			c := -2 * w * dk
			for t := range gl {
				dt := xi[t] - xj[t]
				gl[t] += c * dt * dt
			}
		}
	}
	grad[d] = gs + 0.5*trW*s2
	if jr := jitterRel; jr > 0 {
		// Only σ_s² moves the diagonal of a stationary kernel.
		grad[d] += 0.5 * trW * jr * s2
	}
}

// kernelLMLGrad is radialLMLGrad for any kernel, through its ParamGrad
// (np parameters).
func kernelLMLGrad(k Kernel, X *mat.Dense, ws *lmlEval, W []float64, n, np int, trW, jitterRel float64, grad []float64) {
	pt, dm := ws.ptmp, ws.dtmp
	clear(dm)
	for i := 0; i < n; i++ {
		xi := X.RawRowView(i)
		for j := 0; j <= i; j++ {
			k.ParamGrad(pt, xi, X.RawRowView(j))
			w := W[i*n+j]
			if i == j {
				w *= 0.5
				for t := 0; t < np; t++ {
					dm[t] += pt[t]
				}
			}
			for t := 0; t < np; t++ {
				grad[t] += w * pt[t]
			}
		}
	}
	if jr := jitterRel; jr > 0 {
		for t := 0; t < np; t++ {
			grad[t] += 0.5 * trW * jr * dm[t] / float64(n)
		}
	}
}
