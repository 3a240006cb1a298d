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

// localPenalization is batch BO by local penalization (González, Dai,
// Hennig & Lawrence 2016) applied to EI (the TES paper's LP-EI). Batch
// points are chosen one at a time by maximizing
//
//	log EI(x) + Σ_k log φ(x; x_k),
//	φ(x; x_k) = Φ((L‖x − x_k‖ − M + μ(x_k)) / σ(x_k)),
//
// the probability that x lies outside the ball around an already chosen (or
// pending) x_k that cannot contain the maximizer if f is L-Lipschitz, with
// M = State.Best (the paper's max of the observations) and μ, σ from the
// GP (which is never updated). L is estimated as max ‖∇μ(x)‖ over 500·d
// scrambled-Halton points and the training inputs (the paper maximizes the
// gradient norm; taking the best of a space-filling set is our
// simplification); if it is below 1e-7, L = 10 as in the authors' GPyOpt.
// The penalizers use the transformation-free form since EI > 0.
type localPenalization struct {
	Settings OptimizeSettings
}

// Propose implements Proposer.
func (lp localPenalization) Propose(ctx context.Context, s *State, q int) (*mat.Dense, error) {
	if err := checkState(s, q); err != nil {
		return nil, err
	}
	d := s.Dim()
	L := lipschitz(s.GP, s.Rand)
	f := &lpFunc{g: s.GP, best: s.Best, L: L}
	if s.Pending != nil {
		r, _ := s.Pending.Dims()
		for i := 0; i < r; i++ {
			f.add(s.Pending.RawRowView(i))
		}
	}
	out := mat.NewDense(q, d, nil)
	for j := 0; j < q; j++ {
		x, _, err := MaximizeMixed(ctx, FeasibilityWeighted(f, s), 1, d, CategoriesOf(s.GP), s.Pin(lp.Settings), s.Rand)
		if err != nil {
			return nil, fmt.Errorf("lp-ei: batch point %d: %w", j+1, err)
		}
		out.SetRow(j, x.RawRowView(0))
		// The next Maximize sees a new penalizer; f is not shared with a
		// running optimizer at this point.
		f = f.with(x.RawRowView(0))
	}
	return out, nil
}

// lipschitz estimates max ‖∇μ‖ over a space-filling set and the data.
func lipschitz(g *gp.GP, rng *rand.Rand) float64 {
	d := g.Dim()
	m := 500 * d
	U := mat.NewDense(m, d, nil)
	src := rand.NewPCG(rng.Uint64(), rng.Uint64())
	samplemv.Halton{Kind: samplemv.Owen, Q: distmv.NewUnitUniform(d, src), Src: src}.Sample(U)
	var all mat.Dense
	all.Stack(U, g.X())
	n, _ := all.Dims()
	// ∇μ(x) = Σ_j α_j ∇_x k(x, X_j): O(n d) per point.
	k, X, alpha := g.Kernel(), g.X(), g.Alpha()
	nd, _ := X.Dims()
	dm, dk := make([]float64, d), make([]float64, d)
	L := 0.0
	for i := 0; i < n; i++ {
		x := all.RawRowView(i)
		clear(dm)
		for j := 0; j < nd; j++ {
			k.GradX(dk, x, X.RawRowView(j))
			for c := range dm {
				dm[c] += alpha[j] * dk[c]
			}
		}
		L = math.Max(L, math.Sqrt(floats2(dm)))
	}
	if L < 1e-7 {
		L = 10
	}
	return L
}

func floats2(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return s
}

// lpFunc is log EI times the local penalizers of the centres chosen so far.
type lpFunc struct {
	g       *gp.GP
	best, L float64
	centres [][]float64
	mu, sd  []float64
}

func (f *lpFunc) add(x []float64) {
	m, v := f.g.MeanVar(x)
	f.centres = append(f.centres, append([]float64(nil), x...))
	f.mu = append(f.mu, m)
	f.sd = append(f.sd, math.Sqrt(math.Max(v, 1e-16)))
}

// with returns a copy of f with one more penalizer.
func (f *lpFunc) with(x []float64) *lpFunc {
	c := &lpFunc{g: f.g, best: f.best, L: f.L,
		centres: append([][]float64(nil), f.centres...),
		mu:      append([]float64(nil), f.mu...),
		sd:      append([]float64(nil), f.sd...)}
	c.add(x)
	return c
}

func (f *lpFunc) HasGradient() bool { return true }

// logScale reports that LP-EI scores in log space (see FeasibilityWeighted).
func (f *lpFunc) logScale() bool { return true }

func (f *lpFunc) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	d := len(x)
	var v float64
	var g []float64
	if grad == nil {
		m, vr := f.g.MeanVar(x)
		v, _, _ = logEI(m, math.Sqrt(vr), f.best)
	} else {
		buf := make([]float64, 2*d)
		dm, dv := buf[:d], buf[d:]
		m, vr := f.g.MeanVarGrad(x, dm, dv)
		sd := math.Sqrt(vr)
		var am, as float64
		v, am, as = logEI(m, sd, f.best)
		g = grad.RawRowView(0)
		for i := range g {
			g[i] = am * dm[i]
			if sd > 1e-150 {
				g[i] += as * dv[i] / (2 * sd)
			}
		}
	}
	if math.IsInf(v, -1) {
		return v
	}
	for k, c := range f.centres {
		r := 0.0
		for i := range x {
			r += (x[i] - c[i]) * (x[i] - c[i])
		}
		r = math.Sqrt(r)
		z := (f.L*r - f.best + f.mu[k]) / f.sd[k]
		v += LogPhi(z)
		if g != nil && r > 1e-12 {
			w := invMills(z) * f.L / (f.sd[k] * r)
			for i := range g {
				g[i] += w * (x[i] - c[i])
			}
		}
	}
	return v
}
