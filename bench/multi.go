package bench

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/pareto"
	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/store"
)

// multiProblem is implemented by the shipped several-output problems
// (problems/synthetic MultiObjective): their noise-free outputs, reference
// point, maximum hypervolume and constrained optimum.
type multiProblem interface {
	Problem() *testfunc.Multi
}

// multiJudged is what an iteration's host.MultiRecord says the user keeps:
// the trial IDs of the evaluated Pareto set (judged by the posterior mean
// at the evaluated points) and, with one objective, the best feasible
// trial (−1 when none).
type multiJudged struct {
	pareto       []int
	bestFeasible int
}

// judgedOf reduces a record's several-output fields to multiJudged (nil
// for a single-output record).
func judgedOf(m *host.MultiRecord) *multiJudged {
	if m == nil {
		return nil
	}
	j := &multiJudged{bestFeasible: -1}
	if m.Pareto != nil {
		j.pareto = m.Pareto.Trials
	}
	if m.BestFeasible != nil {
		j.bestFeasible = m.BestFeasible.Trial
	}
	return j
}

// multiProblemOf opens a fresh instance of spec's objective, configured as
// its runs are, and returns its several-output problem, or nil when it is
// not one of the shipped several-output problems.
func (s *Suite) multiProblemOf(ctx context.Context, spec runSpec, params map[string]string) (*testfunc.Multi, error) {
	obj, exclusive, err := s.opener()(ctx, spec.Problem.Name)
	if err != nil || exclusive {
		return nil, nil
	}
	mp, ok := obj.(multiProblem)
	if !ok {
		return nil, nil
	}
	if err := host.ConfigureObjective(ctx, obj, spec.Problem.Name, s.studyOptions(spec, params)); err != nil {
		return nil, err
	}
	return mp.Problem(), nil
}

// multiRegrets fills the rows of a run on a several-output problem p, in
// BoTorch's maximized convention (objectives negated) and from noise-free
// outputs:
//
//   - several objectives: the hypervolume regret MaxHV − HV(S) above the
//     problem's reference point, where S holds the feasible points of a set
//     of evaluated trials. Row.Regret and Row.BestEvalRegret use the user's
//     rule, S = the iteration's evaluated Pareto set (host.MultiRecord's
//     pareto, judged by the posterior mean); Row.BestTrueRegret the oracle
//     rule, S = every complete trial so far (what BoTorch's runner reports).
//   - one objective under constraints: the regret f(x) − f* (native,
//     minimized) of the best feasible trial: by the user's rule the
//     record's best_feasible trial (no regret when it is infeasible
//     noise-free), by the oracle rule the best noise-free feasible value so
//     far. A run without a feasible trial has no regret. Where the problem
//     states no optimum (PressureVessel, WeldedBeam; BoTorch v0.11.3 states
//     none either), f* = 0: the "regret" is the best feasible value itself,
//     comparable between methods but not a distance to the optimum.
//
// Trials are evaluated once each; judged holds each row's record.
func multiRegrets(p *testfunc.Multi, trials []store.Trial, rows []row, judged []*multiJudged) error {
	cache := map[int][]float64{} // trial ID → noise-free outputs, nil when infeasible
	valueOf := func(t store.Trial) ([]float64, error) {
		if y, ok := cache[t.ID]; ok {
			return y, nil
		}
		f, err := p.Eval(t.X)
		if err != nil {
			return nil, fmt.Errorf("noise-free outputs of trial %d: %w", t.ID, err)
		}
		var y []float64
		if p.Feasible(f) {
			y = make([]float64, p.Objectives())
			for j := range y {
				y[j] = -f[j]
			}
		}
		cache[t.ID] = y
		return y, nil
	}
	byID := make(map[int]store.Trial, len(trials))
	for _, t := range trials {
		byID[t.ID] = t
	}
	ref := make([]float64, len(p.RefPoint))
	for j, r := range p.RefPoint {
		ref[j] = -r
	}
	// regretOf is the regret of the feasible noise-free values ys.
	regretOf := func(ys [][]float64) *float64 {
		if p.Objectives() > 1 {
			if math.IsNaN(p.MaxHV) {
				return nil
			}
			return new(p.MaxHV - pareto.Hypervolume(ys, ref))
		}
		if len(ys) == 0 {
			return nil
		}
		fStar := p.Optimum
		if math.IsNaN(fStar) {
			fStar = 0 // then the "regret" is the best feasible value itself
		}
		best := math.Inf(-1)
		for _, y := range ys {
			best = math.Max(best, y[0])
		}
		return new(-best - fStar)
	}
	var all [][]float64 // feasible noise-free values of the complete trials so far
	k := 0
	for i := range rows {
		for ; k < len(trials) && trials[k].Iteration <= rows[i].Iter; k++ {
			if trials[k].Status != store.Complete {
				continue
			}
			y, err := valueOf(trials[k])
			if err != nil {
				return err
			}
			if y != nil {
				all = append(all, y)
			}
		}
		rows[i].BestTrueRegret = regretOf(all)
		if judged[i] == nil {
			continue
		}
		ids := judged[i].pareto
		if p.Objectives() == 1 {
			ids = nil
			if judged[i].bestFeasible >= 0 {
				ids = []int{judged[i].bestFeasible}
			}
		}
		var kept [][]float64
		for _, id := range ids {
			t, ok := byID[id]
			if !ok {
				return fmt.Errorf("iteration %d: its Pareto set names trial %d, which the study does not hold", rows[i].Iter, id)
			}
			y, err := valueOf(t)
			if err != nil {
				return err
			}
			if y != nil {
				kept = append(kept, y)
			}
		}
		rows[i].BestEvalRegret = regretOf(kept)
		rows[i].Regret = rows[i].BestEvalRegret
	}
	return nil
}

// multiEvaluated fills the regrets of a run on a several-output problem
// (multiRegrets); objectives other than the shipped several-output
// problems are left without.
func (r *runner) multiEvaluated(ctx context.Context, spec runSpec, studyID int64, rows []row, judged []*multiJudged) error {
	p, err := r.s.multiProblemOf(ctx, spec, r.params[spec.Problem.Label()])
	if err != nil || p == nil {
		return err
	}
	trials, err := r.db.Trials(ctx, studyID)
	if err != nil {
		return err
	}
	return multiRegrets(p, trials, rows, judged)
}

// multiNote is the sentence summary.md and comparison.md add when the
// suite holds shipped several-output problems: what their regrets are.
func (s *Suite) multiNote() string {
	var names []string
	for _, p := range s.Problems {
		if obj, exclusive, err := s.opener()(context.Background(), p.Name); err == nil && !exclusive {
			if _, ok := obj.(multiProblem); ok {
				names = append(names, p.Label())
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("\nOn the several-output problems (%s) the regret is the hypervolume regret MaxHV − HV of the evaluated\n"+
		"Pareto set (judged by the posterior mean; noise-free outputs, the problem's reference point) and, with one objective\n"+
		"under constraints, the noise-free regret of the best feasible trial (its objective value itself where the problem\n"+
		"states no optimum); a run without a feasible trial has none.\n",
		strings.Join(names, ", "))
}
