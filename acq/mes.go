package acq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/samplemv"

	"github.com/tesbo/tesbo/gp"
)

// mes is max-value entropy search (Wang & Jegelka 2017, Eq. (6)): the
// information a noise-free evaluation at x carries about the maximum value
// y* = max f, estimated from K samples y*_k:
//
//	α(x) = (1/K) Σ_k [ γ_k(x) ψ(γ_k(x)) / 2 − log Φ(γ_k(x)) ],
//	γ_k(x) = (y*_k − μ(x)) / σ(x),  ψ = φ/Φ (invMills).
//
// The y*_k are the maxima of whole-function posterior samples (pathMaxima;
// the paper's "MES-R" variant uses random features the same way) or, with
// Gumbel, draws from the Gumbel fit of Wang & Jegelka's Sec. 3.1:
// Pr[y* < y] ≈ Π_x Φ((y − μ(x))/σ(x)) over a discretization (here 1000·d
// scrambled-Halton points plus the training inputs), matched at its
// quartiles. Simplifications: samples below the incumbent State.Best are
// raised to it (y* ≥ the best observation up to noise), and the entropy is
// that of the latent f(x), as in the paper's derivation. MES scores single
// points; batches come from Greedy.
type mes struct {
	Samples  int              // K (0: 10)
	Gumbel   bool             // Gumbel approximation instead of path maxima
	Features int              // random Fourier features per path (0: 1000)
	Settings OptimizeSettings // path maximization (zero: see pathMaxima)
}

// PathSamples implements PathSampler: K paths per point scored, none
// with the Gumbel approximation.
func (e mes) PathSamples(int) (paths, features int) {
	if e.Gumbel {
		return 0, 0
	}
	return orDefault(e.Samples, 10), orDefault(e.Features, 1000)
}

// Prepare implements Scorer.
func (e mes) Prepare(ctx context.Context, s *State, q int) (Func, error) {
	if err := singlePoint("mes", s, q); err != nil {
		return nil, err
	}
	K := orDefault(e.Samples, 10)
	var ys []float64
	if e.Gumbel {
		var err error
		if ys, err = gumbelMaxValues(s.GP, K, s.Rand); err != nil {
			return nil, fmt.Errorf("mes: %w", err)
		}
	} else {
		var err error
		if _, ys, err = pathMaxima(ctx, s.GP, K, orDefault(e.Features, 1000), e.Settings, s.Rand); err != nil {
			return nil, fmt.Errorf("mes: %w", err)
		}
	}
	for i := range ys {
		ys[i] = math.Max(ys[i], s.Best)
	}
	return &pointFunc{g: s.GP, score: func(m, sd float64) (float64, float64, float64) {
		return mesScore(ys, m, sd)
	}}, nil
}

// mesScore returns α and its partial derivatives in μ and σ.
func mesScore(ys []float64, m, sd float64) (v, dm, dsd float64) {
	sd = math.Max(sd, 1e-12)
	for _, y := range ys {
		g := (y - m) / sd
		lam := invMills(g)
		v += 0.5*g*lam - LogPhi(g)
		// d/dγ [γλ/2 − log Φ] = λ/2 + γλ'/2 − λ with λ' = −λ(γ + λ).
		dg := -0.5*lam - 0.5*g*lam*(g+lam)
		dm += dg * (-1 / sd)
		dsd += dg * (-g / sd)
	}
	k := float64(len(ys))
	return v / k, dm / k, dsd / k
}

// gumbelMaxValues draws K samples of y* from the Gumbel approximation of
// Wang & Jegelka (2017, Sec. 3.1).
func gumbelMaxValues(g *gp.GP, K int, rng *rand.Rand) ([]float64, error) {
	mean, sd := maxValueGrid(g, rng)
	a, b := gumbelFit(mean, sd, g.Y())
	return gumbelDraws(a, b, K, rng), nil
}

// maxValueGrid returns the posterior mean and standard deviation of f at
// the discretization of the Gumbel approximation: 1000·d scrambled-Halton
// points (seeded from rng) followed by the training inputs.
func maxValueGrid(g *gp.GP, rng *rand.Rand) (mean, sd []float64) {
	d := g.Dim()
	m := 1000 * d
	U := mat.NewDense(m, d, nil)
	src := rand.NewPCG(rng.Uint64(), rng.Uint64())
	samplemv.Halton{Kind: samplemv.Owen, Q: distmv.NewUnitUniform(d, src), Src: src}.Sample(U)
	var all mat.Dense
	all.Stack(U, g.X())
	n, _ := all.Dims()
	mean, vr := make([]float64, n), make([]float64, n)
	g.Predict(&all, mean, vr)
	sd = make([]float64, n)
	for i := range vr {
		sd[i] = math.Sqrt(math.Max(vr[i], 1e-12))
	}
	return mean, sd
}

// gumbelFit returns the location a and scale b of the Gumbel distribution,
// CDF exp(−exp(−(y − a)/b)), whose quartiles match those of
//
//	Pr[y* < y] ≈ Π_i Φ((y − μ_i)/σ_i)
//
// (Wang & Jegelka 2017, Sec. 3.1: the maximum of independent Gaussians at
// the grid points). The quartiles are found by bisection on the log CDF,
// bracketed below by min μ_i and above by max(μ_i + 6σ_i, max ys) (the
// observations ys only widen the bracket). A degenerate fit (b ≤ 0) gets
// b = 1e-6.
func gumbelFit(mean, sd, ys []float64) (a, b float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range mean {
		lo = math.Min(lo, mean[i])
		hi = math.Max(hi, mean[i]+6*sd[i])
	}
	for _, y := range ys {
		hi = math.Max(hi, y)
	}
	// log Pr[y* < y] = Σ log Φ((y − μ_i)/σ_i), increasing in y.
	logCDF := func(y float64) float64 {
		s := 0.0
		for i := range mean {
			s += LogPhi((y - mean[i]) / sd[i])
		}
		return s
	}
	quantile := func(p float64) float64 {
		a, b := lo, hi
		lp := math.Log(p)
		for logCDF(b) < lp {
			b += hi - lo + 1
		}
		for it := 0; it < 100 && b-a > 1e-10*(1+math.Abs(b)); it++ {
			c := 0.5 * (a + b)
			if logCDF(c) < lp {
				a = c
			} else {
				b = c
			}
		}
		return 0.5 * (a + b)
	}
	q25, q50, q75 := quantile(0.25), quantile(0.5), quantile(0.75)
	// Gumbel quantiles: y_p = a − b log(−log p).
	b = (q75 - q25) / (math.Log(math.Log(4)) - math.Log(math.Log(4.0/3)))
	if !(b > 0) {
		b = 1e-6
	}
	a = q50 + b*math.Log(math.Log(2))
	return a, b
}

// gumbelDraws returns K draws a − b log(−log u), u ~ U(0,1] from rng, of
// the Gumbel distribution with location a and scale b (inverse CDF).
func gumbelDraws(a, b float64, K int, rng *rand.Rand) []float64 {
	ys := make([]float64, K)
	for i := range ys {
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		ys[i] = a - b*math.Log(-math.Log(u))
	}
	return ys
}
