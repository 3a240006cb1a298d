package acq

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// cei is expected improvement with constraints (Gardner et al. 2014,
// "Bayesian optimization with inequality constraints"; the criterion goes
// back to Schonlau, Welch & Jones 1998): for one objective and independent
// constraint outputs,
//
//	α(x) = log EI(x) + Σ_c log Φ((μ_c(x) − t_c)/σ_c(x)),
//
// the log of EI of the objective times the probability that every
// constraint holds (t_c: the constraint's threshold in model units), in
// its noisy form (cei_nei.go): α averages EI × P(feasible) over fantasies
// of the evaluated points' latent outputs, each with its own incumbent.
// Beyond neiMaxPoints evaluated points, or while no fantasy has a feasible
// point, the incumbent is the largest posterior mean of the objective at
// the evaluated points whose observed constraint values are all feasible;
// while none is, α is the log probability of feasibility alone. Batches
// are greedy with
// the kriging believer: each chosen point (and every pending one) is added
// to every output's GP with its posterior mean as a fantasized
// observation, which shrinks the variance there. The gradient is analytic.
// Besides the best raw samples, the local searches start beside the best
// feasible evaluated points (nearBestStarts).
type cei struct {
	Settings OptimizeSettings
}

// Propose implements Proposer: cei needs several outputs.
func (cei) Propose(context.Context, *State, int) (*mat.Dense, error) {
	return nil, needsOutputs("cei")
}

// OutputsOnly implements OutputsOnly: cei has no form for one value.
func (cei) OutputsOnly() {}

// HandlesPending reports that pending points are fantasized.
func (cei) HandlesPending() bool { return true }

// CheckOutputs implements OutputsChecker: cei takes one objective.
func (cei) CheckOutputs(objectives, _ int) error {
	if objectives != 1 {
		return fmt.Errorf("cei optimizes one objective under constraints, the study has %d objectives: use nehvi or tes", objectives)
	}
	return nil
}

// ProposeMulti implements MultiProposer.
func (c cei) ProposeMulti(ctx context.Context, s *MultiState, q int) (*mat.Dense, error) {
	if err := CheckMulti("cei", s, q); err != nil {
		return nil, err
	}
	obj, con, thr := kindsOf(s)
	if err := c.CheckOutputs(len(obj), len(con)); err != nil {
		return nil, err
	}
	gps := make([]*gp.GP, len(s.Outputs))
	for k, o := range s.Outputs {
		gps[k] = o.GP
	}
	ranked := feasibleByMean(s, gps[obj[0]], con)
	best, ok := bestOf(ranked)
	starts := nearBestStarts(s, ranked)
	fant, err := neiDraw(s, gps, obj[0], con, thr)
	if err != nil {
		return nil, err
	}
	d := gps[0].Dim()
	out := mat.NewDense(q, d, nil)
	if s.Pending != nil {
		if gps, err = believe(gps, s.Pending); err != nil {
			return nil, err
		}
		if fant != nil {
			if fant, err = believeFantasies(fant, s.Pending); err != nil {
				return nil, err
			}
		}
	}
	for i := 0; i < q; i++ {
		f := &ceiFunc{gps: gps, obj: obj[0], con: con, thr: thr, best: best, improve: ok, starts: starts, fant: fant}
		w := FeasibilityWeighted(f, &State{Feasible: s.Feasible})
		x, _, err := MaximizeMixed(ctx, w, 1, d, CategoriesOf(gps[0]), c.Settings, s.Rand)
		if err != nil {
			return nil, fmt.Errorf("cei: maximize: %w", err)
		}
		out.SetRow(i, x.RawRowView(0))
		if i+1 < q {
			if gps, err = believe(gps, x); err != nil {
				return nil, err
			}
			if fant != nil {
				if fant, err = believeFantasies(fant, x); err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// believe adds the rows of X to every GP with their posterior means as
// observations (the kriging believer).
func believe(gps []*gp.GP, X *mat.Dense) ([]*gp.GP, error) {
	n, _ := X.Dims()
	out := make([]*gp.GP, len(gps))
	for k, g := range gps {
		y := make([]float64, n)
		for i := range y {
			y[i], _ = g.MeanVar(X.RawRowView(i))
		}
		var err error
		if out[k], err = g.Add(X, y); err != nil {
			return nil, fmt.Errorf("cei: fantasize pending points: %w", err)
		}
	}
	return out, nil
}

// feasiblePoint is an evaluated row whose observed constraints all hold,
// with the objective's posterior mean there.
type feasiblePoint struct {
	row int
	mu  float64
}

// feasibleByMean returns the evaluated points whose observed constraints
// are all ≥ 0, largest posterior mean of the objective first.
func feasibleByMean(s *MultiState, g *gp.GP, con []int) []feasiblePoint {
	n, _ := s.X.Dims()
	var out []feasiblePoint
	for i := 0; i < n; i++ {
		feas := true
		for _, k := range con {
			if s.Y.At(i, k) < 0 {
				feas = false
			}
		}
		if feas {
			mu, _ := g.MeanVar(s.X.RawRowView(i))
			out = append(out, feasiblePoint{i, mu})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].mu > out[b].mu })
	return out
}

// bestOf returns cei's incumbent, the largest posterior mean of the
// objective among the ranked feasible points, and whether there is one.
func bestOf(ranked []feasiblePoint) (float64, bool) {
	if len(ranked) == 0 {
		return math.Inf(-1), false
	}
	return ranked[0].mu, true
}

// feasibleBest is bestOf(feasibleByMean(s, g, con)).
func feasibleBest(s *MultiState, g *gp.GP, con []int) (float64, bool) {
	return bestOf(feasibleByMean(s, g, con))
}

// nearBestStarts returns extra starts for cei's local search: the first
// nearBestPoints of the ranked feasible points (feasibleByMean), each
// followed by one perturbation per scale of nearBestJitter. Late in a study
// EI × P(feasible) is often largest in small regions beside the
// incumbent, which space-filling raw samples in d ≥ 5 rarely hit; from
// the raw samples alone the local searches then end on lower, exploratory
// optima (TestCEIStartsHelp) and the incumbent is refined late or never
// (docs/results/issue31, "Eighth session").
func nearBestStarts(s *MultiState, ranked []feasiblePoint) []*mat.Dense {
	_, d := s.X.Dims()
	var out []*mat.Dense
	for _, c := range ranked[:min(len(ranked), nearBestPoints)] {
		x := s.X.RawRowView(c.row)
		out = append(out, mat.NewDense(1, d, append([]float64(nil), x...)))
		for _, sd := range nearBestJitter {
			y := make([]float64, d)
			for j := range y {
				y[j] = min(1, max(0, x[j]+sd*s.Rand.NormFloat64()))
			}
			out = append(out, mat.NewDense(1, d, y))
		}
	}
	return out
}

// nearBestPoints and nearBestJitter shape nearBestStarts: the best
// feasible points, and the standard deviations (unit-cube units) of their
// perturbations, one each.
const nearBestPoints = 3

var nearBestJitter = []float64{0.005, 0.02, 0.05}

// ceiFunc is cei's α for one point.
type ceiFunc struct {
	gps     []*gp.GP
	obj     int
	con     []int
	thr     []float64
	best    float64
	improve bool // false: no feasible incumbent, α = log P(feasible)
	starts  []*mat.Dense
	fant    []neiFantasy // set: the noisy form (evalNEI)
}

// Starts implements Starter (nearBestStarts).
func (f *ceiFunc) Starts(q int) []*mat.Dense {
	if q != 1 {
		return nil
	}
	return f.starts
}

func (f *ceiFunc) HasGradient() bool { return true }
func (f *ceiFunc) logScale() bool    { return true }

func (f *ceiFunc) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	d := len(x)
	var g []float64
	if grad != nil {
		g = grad.RawRowView(0)
		for j := range g {
			g[j] = 0
		}
	}
	if f.fant != nil {
		return f.evalNEI(x, g)
	}
	dm, dv := make([]float64, d), make([]float64, d)
	total := f.logTerms(f.gps, f.best, f.improve, x, g, dm, dv)
	if math.IsNaN(total) {
		return math.Inf(-1)
	}
	return total
}

// logTerms returns log EI(x; best) (only when improve) plus
// Σ_c log Φ((μ_c(x) − t_c)/σ_c(x)) under the models gps (indexed as the
// state's outputs) and adds its gradient into g (nil for none); dm and dv
// are scratch of len d. Eval uses the posterior, evalNEI each fantasy.
func (f *ceiFunc) logTerms(gps []*gp.GP, best float64, improve bool, x, g, dm, dv []float64) float64 {
	total := 0.0
	add := func(k int, term func(mu, sd float64) (v, dmu, dsd float64)) {
		mu, v := gps[k].MeanVarGrad(x, dm, dv)
		sd := math.Sqrt(math.Max(v, 1e-18))
		val, dmu, dsd := term(mu, sd)
		total += val
		for j := range g {
			g[j] += dmu*dm[j] + dsd*dv[j]/(2*sd)
		}
	}
	if improve {
		add(f.obj, func(mu, sd float64) (float64, float64, float64) { return logEI(mu, sd, best) })
	}
	for i, k := range f.con {
		t := f.thr[i]
		add(k, func(mu, sd float64) (float64, float64, float64) {
			z := (mu - t) / sd
			r := invMills(z) // d log Φ(z)/dz
			return LogPhi(z), r / sd, -r * z / sd
		})
	}
	return total
}
