package acq

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// parego is ParEGO (Knowles 2006, "ParEGO: a hybrid algorithm with on-line
// landscape approximation for expensive multiobjective optimization
// problems", IEEE Trans. Evol. Comput. 10(1):50–66), extended to outcome
// constraints by the probability of feasibility (Gardner et al. 2014,
// "Bayesian optimization with inequality constraints", ICML), for studies
// with several outputs (MultiProposer). It is the baseline users compare
// with, not the default.
//
// For each batch point j it draws a fresh weight vector λ uniformly from
// the simplex over the m objectives (State.Rand; Knowles draws from an
// evenly spaced subset of it), normalizes each oriented objective to
// c_i ∈ [0, 1] over the evaluated points (0 best: c_i = (max_i − y_i) /
// (max_i − min_i)), and scalarizes each evaluated point by the augmented
// Chebyshev function
//
//	f_λ(y) = max_i λ_i c_i + ρ Σ_i λ_i c_i,   ρ = 0.05 (Knowles' value),
//
// fits one GP (package gp, MAP, warm-started from the first objective's
// GP) to the standardized values −f_λ, and maximizes
//
//	log EI_λ(x) + Σ_k log P(g_k(x) ≥ 0),
//
// with EI's incumbent the best −f_λ among the feasible evaluated points
// (only the feasibility term when none is feasible yet) and g_k the
// constraint outputs' GPs (feasible at ToModel(0) and above). The batch's
// earlier points and the pending points are fantasized at the scalarized
// GP's posterior mean (kriging believer), as Greedy does. With a single
// objective λ = 1 and f_λ is the normalized objective, so parego is then
// constrained EI.
type parego struct {
	settings OptimizeSettings
}

// chebyshevRho is ρ of the augmented Chebyshev scalarization.
const chebyshevRho = 0.05

// ProposeMulti implements MultiProposer.
func (p parego) ProposeMulti(ctx context.Context, s *MultiState, q int) (*mat.Dense, error) {
	if err := CheckMulti("parego", s, q); err != nil {
		return nil, err
	}
	var objs, cons []int
	for k, o := range s.Outputs {
		if o.Kind == Constraint {
			cons = append(cons, k)
		} else {
			objs = append(objs, k)
		}
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("parego: no objective output")
	}
	_, d := s.X.Dims()
	out := mat.NewDense(q, d, nil)
	var chosen *mat.Dense
	for j := range q {
		lambda := simplexWeights(len(objs), s)
		y, best := scalarize(s, objs, cons, lambda)
		g, err := gp.FitContext(ctx, s.X, y, gp.FitSettings{Kernel: s.Outputs[objs[0]].GP.Kernel(), Warm: s.Outputs[objs[0]].GP, Rand: s.Rand})
		if err != nil {
			return nil, fmt.Errorf("parego: fit the scalarized GP for batch point %d: %w", j+1, err)
		}
		if fant := stackRows(s.Pending, chosen); fant != nil {
			if g, err = addLie(g, g, fant, LieBeliever); err != nil {
				return nil, err
			}
		}
		var conGPs []*gp.GP
		var zero []float64
		for _, k := range cons {
			conGPs = append(conGPs, s.Outputs[k].GP)
			zero = append(zero, s.Outputs[k].ToModel(0))
		}
		f := paregoFunc(g, best, conGPs, zero)
		st := &State{GP: g, Feasible: s.Feasible}
		x, _, err := MaximizeMixed(ctx, FeasibilityWeighted(f, st), 1, d, CategoriesOf(g), p.settings, s.Rand)
		if err != nil {
			return nil, fmt.Errorf("parego: maximize for batch point %d: %w", j+1, err)
		}
		out.SetRow(j, x.RawRowView(0))
		chosen = stackRows(chosen, x)
	}
	return out, nil
}

// simplexWeights draws λ uniformly from the simplex {λ ≥ 0, Σλ = 1}: m
// standard exponentials, normalized.
func simplexWeights(m int, s *MultiState) []float64 {
	w := make([]float64, m)
	var sum float64
	for i := range w {
		w[i] = s.Rand.ExpFloat64()
		sum += w[i]
	}
	for i := range w {
		w[i] /= sum
	}
	return w
}

// scalarize returns the standardized values −f_λ of the evaluated points
// (see parego) and the best of them among the feasible points (−Inf when
// none is feasible).
func scalarize(s *MultiState, objs, cons []int, lambda []float64) (y []float64, best float64) {
	n, _ := s.Y.Dims()
	lo, hi := make([]float64, len(objs)), make([]float64, len(objs))
	for j, k := range objs {
		lo[j], hi[j] = math.Inf(1), math.Inf(-1)
		for i := range n {
			lo[j], hi[j] = math.Min(lo[j], s.Y.At(i, k)), math.Max(hi[j], s.Y.At(i, k))
		}
	}
	raw := make([]float64, n)
	for i := range n {
		var mx, sum float64
		for j, k := range objs {
			c := 0.0
			if r := hi[j] - lo[j]; r > 0 {
				c = (hi[j] - s.Y.At(i, k)) / r
			}
			mx = math.Max(mx, lambda[j]*c)
			sum += lambda[j] * c
		}
		raw[i] = -(mx + chebyshevRho*sum)
	}
	y = standardize(raw)
	best = math.Inf(-1)
	for i := range n {
		feasible := true
		for _, k := range cons {
			feasible = feasible && s.Y.At(i, k) >= 0
		}
		if feasible {
			best = math.Max(best, y[i])
		}
	}
	return y, best
}

// standardize returns (v − mean)/sd (sd 1 when the values do not vary).
func standardize(v []float64) []float64 {
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	sd := 1.0
	if len(v) > 1 {
		if s := math.Sqrt(ss / float64(len(v)-1)); s > 1e-12 {
			sd = s
		}
	}
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = (x - m) / sd
	}
	return out
}

// stackRows returns the rows of a above those of b (either may be nil).
func stackRows(a, b *mat.Dense) *mat.Dense {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	ra, c := a.Dims()
	rb, _ := b.Dims()
	out := mat.NewDense(ra+rb, c, nil)
	out.Slice(0, ra, 0, c).(*mat.Dense).Copy(a)
	out.Slice(ra, ra+rb, 0, c).(*mat.Dense).Copy(b)
	return out
}

// paregoFunc is the α parego maximizes: cei's log EI of the scalarized GP
// g over its feasible incumbent best (left out while there is none, best
// = −Inf) plus Σ_k log Φ((μ_k(x) − zero_k)/σ_k(x)), the log probability
// that constraint k's GP is at or above its feasibility threshold.
func paregoFunc(g *gp.GP, best float64, cons []*gp.GP, zero []float64) *ceiFunc {
	f := &ceiFunc{gps: append([]*gp.GP{g}, cons...), obj: 0, thr: zero, best: best, improve: !math.IsInf(best, -1)}
	for k := range cons {
		f.con = append(f.con, k+1)
	}
	return f
}

var _ MultiProposer = parego{}

// Propose implements Proposer: parego needs a study with several outputs.
func (parego) Propose(context.Context, *State, int) (*mat.Dense, error) {
	return nil, fmt.Errorf("parego optimizes objectives with several outputs (sdk.Info.Outputs); this one has one: use another acquisition")
}

// OutputsOnly implements OutputsOnly: parego has no form for one value.
func (parego) OutputsOnly() {}

// HandlesPending implements PendingAware: pending points are fantasized
// at the scalarized GP's posterior mean, so parego may propose while
// evaluations run (worker mode).
func (parego) HandlesPending() bool { return true }
