package acq

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// ei is expected improvement (Močkus 1978; Jones, Schonlau & Welch 1998):
//
//	EI(x) = E[max(f(x) − y_best, 0)] = σ(x)·h(z),  z = (μ(x) − y_best)/σ(x),
//	h(z) = φ(z) + z·Φ(z),
//
// with the GP posterior N(μ(x), σ²(x)) of the latent f and the incumbent
// y_best = State.Best. The Func returns log EI(x) (same maximizer), computed
// stably in the far tail (logEI; Ament et al. 2023), so that the optimizer
// sees a useful gradient where EI itself underflows to 0. It scores single
// points (q = 1); batches are built by Greedy.
type ei struct{}

// Prepare implements Scorer.
func (ei) Prepare(_ context.Context, s *State, q int) (Func, error) {
	if err := singlePoint("ei", s, q); err != nil {
		return nil, err
	}
	return &pointFunc{g: s.GP, log: true, score: func(m, sd float64) (float64, float64, float64) {
		return logEI(m, sd, s.Best)
	}}, nil
}

// pi is probability of improvement (Kushner 1964):
//
//	PI(x) = Φ((μ(x) − y_best)/σ(x)).
//
// The Func returns log PI(x) = log Φ(z) (LogPhi; finite far in the tail) and
// scores single points; no margin ξ is used (y_best = State.Best).
type pi struct{}

// Prepare implements Scorer.
func (pi) Prepare(_ context.Context, s *State, q int) (Func, error) {
	if err := singlePoint("pi", s, q); err != nil {
		return nil, err
	}
	return &pointFunc{g: s.GP, log: true, score: func(m, sd float64) (float64, float64, float64) {
		if !(sd > 0) {
			if m > s.Best {
				return 0, 0, 0
			}
			return math.Inf(-1), 0, 0
		}
		z := (m - s.Best) / sd
		lam := invMills(z) // d log Φ / dz
		return LogPhi(z), lam / sd, -lam * z / sd
	}}, nil
}

// UCB is the GP upper confidence bound (GP-UCB, Srinivas et al. 2010):
//
//	UCB(x) = μ(x) + √β_t · σ(x).
//
// With Beta > 0 the weight is fixed (BoTorch's benchmark uses β = 2);
// otherwise it follows betaSchedule(Iter, d, Delta). It scores single points;
// batches come from Greedy (BUCB when the lies are the posterior mean).
type UCB struct {
	Beta  float64 // fixed β; 0 selects the schedule
	Delta float64 // δ of the schedule; 0 means 0.1
}

// betaSchedule returns the GP-UCB exploration weight at BO iteration t ≥ 1
// in dimension d with confidence δ ∈ (0,1):
//
//	β_t = 2 log(d t² π² / (6δ)),
//
// Srinivas et al. (2010) Theorem 1's schedule with the size |D| of a finite
// domain replaced by the dimension d, the practical form popularised by
// Brochu, Cora & de Freitas (2010). (Theorem 2's continuous-domain constants
// depend on unknown smoothness bounds.) t < 1 is treated as 1.
func betaSchedule(t, d int, delta float64) float64 {
	if !(delta > 0 && delta < 1) {
		delta = 0.1
	}
	tt := float64(max(t, 1))
	return 2 * math.Log(float64(max(d, 1))*tt*tt*math.Pi*math.Pi/(6*delta))
}

// Prepare implements Scorer.
func (u UCB) Prepare(_ context.Context, s *State, q int) (Func, error) {
	if err := singlePoint("ucb", s, q); err != nil {
		return nil, err
	}
	beta := u.Beta
	if !(beta > 0) {
		beta = betaSchedule(s.Iter, s.Dim(), u.Delta)
	}
	rb := math.Sqrt(beta)
	return &pointFunc{g: s.GP, log: true, score: func(m, sd float64) (float64, float64, float64) {
		return m + rb*sd, 1, rb
	}}, nil
}

func singlePoint(name string, s *State, q int) error {
	if q != 1 {
		return fmt.Errorf("%s scores single points, asked for a batch of %d (wrap it in acq.Greedy for batches)", name, q)
	}
	if s == nil || s.GP == nil {
		return fmt.Errorf("%s: state has no GP", name)
	}
	return nil
}

// pointFunc is a single-point acquisition α(x) = score(μ(x), σ(x)) where
// score also returns ∂α/∂μ and ∂α/∂σ; the gradient in x follows from the
// GP's ∇μ and ∇σ² (∇σ = ∇σ²/(2σ)).
type pointFunc struct {
	g     *gp.GP
	score func(mean, sd float64) (v, dmean, dsd float64)
	log   bool // score is log-scale or signed (see logScale)
}

func (f *pointFunc) HasGradient() bool { return true }

// logScale reports whether the score is a logarithm or signed (EI, PI,
// UCB) rather than non-negative (MES); see FeasibilityWeighted.
func (f *pointFunc) logScale() bool { return f.log }

// evalRows scores every row of X with one batched posterior prediction.
func (f *pointFunc) evalRows(X *mat.Dense, out []float64) {
	r, _ := X.Dims()
	mean, vr := make([]float64, r), make([]float64, r)
	f.g.Predict(X, mean, vr)
	for i := range out {
		out[i], _, _ = f.score(mean[i], math.Sqrt(vr[i]))
	}
}

func (f *pointFunc) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	if grad == nil {
		m, v := f.g.MeanVar(x)
		a, _, _ := f.score(m, math.Sqrt(v))
		return a
	}
	d := len(x)
	buf := make([]float64, 2*d)
	dm, dv := buf[:d], buf[d:]
	m, v := f.g.MeanVarGrad(x, dm, dv)
	sd := math.Sqrt(v)
	a, am, as := f.score(m, sd)
	if math.IsInf(a, 0) || math.IsNaN(a) {
		return a
	}
	g := grad.RawRowView(0)
	for i := range g {
		g[i] = am * dm[i]
		if sd > 1e-150 {
			g[i] += as * dv[i] / (2 * sd)
		}
	}
	return a
}

// Greedy builds a batch one point at a time from a single-point Scorer
// (q = 1): after choosing x_j it conditions the GP on a fantasized
// observation at x_j (the lie, see lieKind) and maximizes the Scorer again
// on the updated posterior. Pending points are fantasized the same way
// before the first pick. The incumbent State.Best is kept (the lies never
// exceed it, except LieBeliever's posterior means, which the original
// algorithms also do not count as observations).
//
// With EI and lieMin/lieMean/LieMax this is qEI-CL, the constant liar of
// Ginsbourger, Le Riche & Carraro (2010).
//
// With UCB and LieBeliever it is the registered "bucb", a simplified GP-BUCB
// (Desautels, Krause & Burdick 2014, "Parallelizing exploration-exploitation
// tradeoffs in Gaussian process bandit optimization", JMLR 15:4053–4103).
// What it keeps: batch member j maximizes μ(x) + √β·σ_{j−1}(x), where the
// hallucinated observations (believer lies, y = the posterior mean at each
// earlier member and pending point) leave μ at that of the real data and
// shrink σ around the points already chosen. Where it departs from the
// paper:
//
//   - one β for the whole batch: every member uses the same weight,
//     β_t = betaSchedule(State.Iter, d, δ) with t the BO iteration (the
//     batch index, not the number of evaluations the GP-UCB schedule
//     counts), or the fixed UCB.Beta;
//   - no β inflation: GP-BUCB's regret bound (their Theorem 2) multiplies
//     the GP-UCB weight by exp(2C), C bounding the information the pending
//     batch members carry about f; we use the plain GP-UCB weight, as UCB
//     does for single points, and make no regret claim;
//   - neither the uncertainty-sampling initialization the paper uses to
//     tighten its bound nor its adaptive-batch variant GP-AUCB.
type Greedy struct {
	Scorer   Scorer
	Lie      lieKind
	Settings OptimizeSettings
	// Async marks a batch method meant to condition on points still being
	// evaluated (PendingAware): the registered bucb and qei-cl set it. The
	// greedy batches of the single-point methods (ei, pi, ucb, mes, pes)
	// leave it false, although they fantasize pending points the same way:
	// those name sequential methods. It changes no proposal.
	Async bool
}

// PathSamples implements PathSampler: the Scorer's, when it draws sample
// paths (mes), else none. Each greedy step scores one point.
func (g Greedy) PathSamples(int) (paths, features int) {
	if ps, ok := g.Scorer.(PathSampler); ok {
		return ps.PathSamples(1)
	}
	return 0, 0
}

// Propose implements Proposer.
func (g Greedy) Propose(ctx context.Context, s *State, q int) (*mat.Dense, error) {
	if err := checkState(s, q); err != nil {
		return nil, err
	}
	d := s.Dim()
	cur := s.GP
	var err error
	if s.Pending != nil {
		if cur, err = addLie(cur, s.GP, s.Pending, g.Lie); err != nil {
			return nil, err
		}
	}
	out := mat.NewDense(q, d, nil)
	for j := 0; j < q; j++ {
		st := *s
		st.GP, st.Pending = cur, nil
		f, err := g.Scorer.Prepare(ctx, &st, 1)
		if err != nil {
			return nil, fmt.Errorf("prepare acquisition for batch point %d: %w", j+1, err)
		}
		x, _, err := MaximizeMixed(ctx, FeasibilityWeighted(f, s), 1, d, CategoriesOf(s.GP), s.Pin(g.Settings), s.Rand)
		if err != nil {
			return nil, fmt.Errorf("maximize acquisition for batch point %d: %w", j+1, err)
		}
		out.SetRow(j, x.RawRowView(0))
		if j+1 < q {
			if cur, err = addLie(cur, s.GP, x, g.Lie); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// addLie returns cur conditioned on fantasized observations at the rows of
// X: the constant lie computed from the real observations of orig, or the
// posterior mean of cur (LieBeliever).
func addLie(cur, orig *gp.GP, X *mat.Dense, lie lieKind) (*gp.GP, error) {
	r, _ := X.Dims()
	ys := make([]float64, r)
	obs := orig.Y()
	var c float64
	switch lie {
	case lieMin:
		c = math.Inf(1)
		for _, y := range obs {
			c = math.Min(c, y)
		}
	case LieMax:
		c = math.Inf(-1)
		for _, y := range obs {
			c = math.Max(c, y)
		}
	case lieMean:
		for _, y := range obs {
			c += y / float64(len(obs))
		}
	case LieBeliever:
		mean := make([]float64, r)
		cur.Predict(X, mean, nil)
		copy(ys, mean)
	default:
		return nil, fmt.Errorf("unknown lie %v", lie)
	}
	if lie != LieBeliever {
		for i := range ys {
			ys[i] = c
		}
	}
	g, err := cur.Add(X, ys)
	if err != nil {
		return nil, fmt.Errorf("condition on fantasized observations (lie %v): %w", lie, err)
	}
	return g, nil
}
