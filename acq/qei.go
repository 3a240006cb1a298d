package acq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/gonum/stat/samplemv"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/internal/linalg"
)

// qei is the joint (parallel, multi-point) expected improvement of a batch
// (Ginsbourger, Le Riche & Carraro 2010; Marmin, Chevalier & Ginsbourger
// 2015 for its gradient):
//
//	qEI(X) = E[max(max_j f(x_j) − y_best, 0)],  f_X ~ N(μ_X, Σ_X),
//
// estimated by Monte Carlo with the reparameterization f = μ_X + L z,
// L Lᵀ = Σ_X (Cholesky, jitter escalation), using N fixed base samples z
// drawn once in Prepare (randomized quasi-Monte Carlo: scrambled Halton
// points mapped through Φ⁻¹). With fixed base samples the estimate is a
// deterministic, almost-everywhere differentiable function of X (sample
// average approximation, as in BoTorch), so L-BFGS-B can maximize it; the
// gradient flows through the Cholesky factor (cholBackward) and gp.JointVJP.
// In the stochastic (Adam) mode, EvalSample draws fresh plain-MC samples.
//
// Pending points enter the joint distribution as extra, fixed batch members
// (the improvement is the maximum over batch ∪ pending).
type qei struct {
	// Samples is the number of base samples N (0 means 512).
	Samples int
}

// Prepare implements Scorer.
func (e qei) Prepare(_ context.Context, s *State, q int) (Func, error) {
	if s == nil || s.GP == nil || s.Rand == nil {
		return nil, fmt.Errorf("qei: state needs a GP and a random stream")
	}
	if q < 1 {
		return nil, fmt.Errorf("qei: batch size %d must be positive", q)
	}
	n := e.Samples
	if n <= 0 {
		n = 512
	}
	p := 0
	if s.Pending != nil {
		p, _ = s.Pending.Dims()
	}
	m := q + p
	return &qeiFunc{g: s.GP, best: s.Best, pending: s.Pending, q: q, m: m, n: n,
		z: qmcNormal(s.Rand, n, m)}, nil
}

// qmcNormal returns n×m standard normal base samples: scrambled Halton
// points (Owen's randomization, from rng) mapped coordinate-wise through
// Φ⁻¹. The first Halton point of a scrambled sequence is a uniform random
// point, so no coordinate is ever exactly 0 or 1 with positive probability.
func qmcNormal(rng *rand.Rand, n, m int) []float64 {
	u := mat.NewDense(n, m, nil)
	src := rand.NewPCG(rng.Uint64(), rng.Uint64())
	if m <= 1000 {
		samplemv.Halton{Kind: samplemv.Owen, Q: distmv.NewUnitUniform(m, src), Src: src}.Sample(u)
	} else {
		samplemv.LatinHypercube{Q: distmv.NewUnitUniform(m, src), Src: src}.Sample(u)
	}
	z := u.RawMatrix().Data
	for i, v := range z {
		v = math.Min(math.Max(v, 1e-12), 1-1e-12)
		z[i] = distuv.UnitNormal.Quantile(v)
	}
	return z
}

type qeiFunc struct {
	g       *gp.GP
	best    float64
	pending *mat.Dense
	q, m, n int
	z       []float64 // n×m base samples
}

func (f *qeiFunc) HasGradient() bool { return true }

func (f *qeiFunc) Eval(X, grad *mat.Dense) float64 {
	return f.eval(X, grad, f.z, f.n)
}

// EvalSample implements Stochastic with n fresh plain Monte-Carlo samples.
func (f *qeiFunc) EvalSample(X, grad *mat.Dense, rng *rand.Rand) float64 {
	z := make([]float64, f.n*f.m)
	for i := range z {
		z[i] = rng.NormFloat64()
	}
	return f.eval(X, grad, z, f.n)
}

// full stacks the batch and the pending points.
func (f *qeiFunc) full(X *mat.Dense) *mat.Dense {
	if f.pending == nil {
		return X
	}
	Xf := mat.NewDense(f.m, X.RawMatrix().Cols, nil)
	Xf.Stack(X, f.pending)
	return Xf
}

func (f *qeiFunc) eval(X, grad *mat.Dense, z []float64, ns int) float64 {
	m := f.m
	Xf := f.full(X)
	mean, cov := f.g.Joint(Xf)
	a := make([]float64, m*m)
	for i := 0; i < m; i++ {
		for j := 0; j <= i; j++ {
			a[i*m+j] = cov.At(i, j)
		}
	}
	l := make([]float64, m*m)
	if _, err := linalg.Cholesky(l, a, m); err != nil {
		return math.Inf(-1)
	}
	var gMean, lbar []float64
	if grad != nil {
		gMean = make([]float64, m)
		lbar = make([]float64, m*m)
	}
	fs := make([]float64, m)
	total := 0.0
	for s := 0; s < ns; s++ {
		zs := z[s*m : (s+1)*m]
		best, arg := math.Inf(-1), -1
		for j := 0; j < m; j++ {
			v := mean[j]
			row := l[j*m : j*m+j+1]
			for k, lk := range row {
				v += lk * zs[k]
			}
			fs[j] = v
			if v > best {
				best, arg = v, j
			}
		}
		imp := best - f.best
		if imp <= 0 {
			continue
		}
		total += imp
		if grad != nil {
			gMean[arg]++
			for k := 0; k <= arg; k++ {
				lbar[arg*m+k] += zs[k]
			}
		}
	}
	val := total / float64(ns)
	if grad == nil || val == 0 {
		if grad != nil {
			grad.Zero()
		}
		return val
	}
	inv := 1 / float64(ns)
	for i := range gMean {
		gMean[i] *= inv
	}
	for i := range lbar {
		lbar[i] *= inv
	}
	gCov := mat.NewDense(m, m, linalg.CholeskyVJP(l, lbar, m))
	gX := f.g.JointVJP(Xf, gMean, gCov)
	grad.Copy(gX.Slice(0, f.q, 0, X.RawMatrix().Cols))
	return val
}
