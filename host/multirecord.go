package host

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/pareto"
	"github.com/tesbo/tesbo/sdk"
)

// MultiRecord is what a Record adds for an objective with several outputs
// (sdk.Info.Outputs); its fields sit beside Record's in the JSON line:
//
//	"outputs":[[0.1,0.5,1.1]],"pareto":{"trials":[3,7],"x":[[0.2,0.5],[0.8,0.5]],
//	 "outputs":[[0,0.36,0.7],[0.36,0,1.3]]},"hypervolume":0.17,"ref_point":[0.4,0.4],
//	 "ref_point_derived":true,"feasible_fraction":0.8,"best_feasible":null
//
// Outputs are the batch's outputs (null for a failed evaluation), in
// declared order and native units. Pareto is the evaluated Pareto set:
// the complete trials that no other dominates on the objective outputs
// among those satisfying every constraint, judged by the user's rule — by
// the posterior mean of each output's GP at the evaluated points, so that
// noise does not promote a lucky trial (observed values when a fit
// fails): feasible when their observed outputs satisfy every constraint
// and the posterior says each holds with probability ≥ 0.95 (while no
// trial is that sure, ≥ ½: the posterior means) — with their points and
// observed outputs. Hypervolume is that set's
// (observed objective values) above RefPoint, for two or more objectives.
// RefPoint is in native units, one value per objective output: the
// user's (--ref-point, Options.RefPoint, sdk.Info.RefPoint), or derived
// when RefPointDerived, as BoTorch and Ax derive theirs: the nadir of the
// observed feasible front minus 10% of its range, per objective (package
// pareto, RefPoint), so it moves as the front grows. A study with
// constraints reports FeasibleFraction, the share of complete trials whose
// observed outputs satisfy every constraint, and, with one objective,
// BestFeasible: the feasible trial with the best objective by the same
// rule (then also Record's best_value and best_x).
type MultiRecord struct {
	Outputs          [][]float64   `json:"outputs"`
	Pareto           *ParetoSet    `json:"pareto"`
	Hypervolume      *float64      `json:"hypervolume"`
	RefPoint         []float64     `json:"ref_point"`
	RefPointDerived  bool          `json:"ref_point_derived"`
	FeasibleFraction *float64      `json:"feasible_fraction"`
	BestFeasible     *BestFeasible `json:"best_feasible"`
}

// ParetoSet is the evaluated Pareto set: trial IDs, their points (native
// units) and observed outputs, in trial order.
type ParetoSet struct {
	Trials  []int       `json:"trials"`
	X       [][]float64 `json:"x"`
	Outputs [][]float64 `json:"outputs"`
}

// BestFeasible is the best feasible trial of a constrained study with one
// objective: its ID, point and observed objective value.
type BestFeasible struct {
	Trial int       `json:"trial"`
	X     []float64 `json:"x"`
	Value float64   `json:"value"`
}

// multiRecord fills rec's several-output fields for iteration it, whose
// trials are ts.
func (s *Study) multiRecord(rec *Record, it int, ts []Trial) {
	m := &MultiRecord{Outputs: make([][]float64, len(ts))}
	for i, t := range ts {
		if t.Status == Complete {
			m.Outputs[i] = t.Outputs
		}
	}
	rec.MultiRecord = m
	s.mu.Lock()
	v := s.viewLocked()
	s.mu.Unlock()
	done, judged, sure := v.judgedOutputs(it)
	if len(done) == 0 {
		return
	}
	info := s.info
	feasible := 0
	var cand []int   // rows the user's rule calls feasible (judgedOutputs)
	var likely []int // rows feasible by observation and by the mean only
	for i, t := range done {
		observed := orientedFeasible(info, orientedRowOf(info, t.Outputs, nil))
		if observed {
			feasible++
		}
		switch {
		case observed && sure[i]:
			cand = append(cand, i)
		case observed && orientedFeasible(info, judged[i]):
			likely = append(likely, i)
		}
	}
	if len(cand) == 0 {
		cand = likely // the model is sure of none: the best the mean allows
	}
	if hasConstraint(info) {
		f := float64(feasible) / float64(len(done))
		m.FeasibleFraction = &f
	}
	objs := info.Objectives()
	rows := make([][]float64, len(cand))
	for j, i := range cand {
		rows[j] = make([]float64, len(objs))
		for a, k := range objs {
			rows[j][a] = judged[i][k]
		}
	}
	set := &ParetoSet{Trials: []int{}, X: [][]float64{}, Outputs: [][]float64{}}
	var front [][]float64 // observed oriented objective values of the set
	for _, j := range pareto.Front(rows) {
		t := done[cand[j]]
		set.Trials, set.X, set.Outputs = append(set.Trials, t.ID), append(set.X, t.X), append(set.Outputs, t.Outputs)
		front = append(front, objectiveValues(info, t.Outputs))
	}
	m.Pareto = set
	if len(objs) == 1 && len(set.Trials) > 0 {
		t := done[cand[pareto.Front(rows)[0]]]
		m.BestFeasible = &BestFeasible{Trial: t.ID, X: t.X, Value: t.Outputs[objs[0]]}
		val := m.BestFeasible.Value
		rec.BestValue, rec.BestX = &val, t.X
	}
	if len(objs) < 2 {
		return
	}
	Y := mat.NewDense(len(done), len(info.Outputs), nil)
	for i, t := range done {
		Y.SetRow(i, orientedRowOf(info, t.Outputs, nil))
	}
	ref, declared := v.refPoint(Y)
	m.RefPointDerived = !declared
	m.RefPoint = make([]float64, len(objs))
	for a, k := range objs {
		r := orientationOf(info.Outputs[k])
		m.RefPoint[a] = (ref[a] - r.off) / r.sign
	}
	hv := 0.0
	if len(front) > 0 {
		hv = pareto.Hypervolume(front, ref)
	}
	if math.IsInf(hv, 0) || math.IsNaN(hv) {
		// A product of m ranges beyond the largest float64 (objectives of
		// order 1e154 with 2 of them): JSON cannot carry it, so the
		// record's hypervolume is null rather than the run failing.
		return
	}
	m.Hypervolume = &hv
}

// judgedOutputs returns the complete trials with outputs, their oriented
// outputs as the user's rule judges them — the posterior mean of each
// output's GP (fitted as for iteration it's proposal) at the trial's point,
// or the observed values when the fit fails — and whether the rule calls
// each trial feasible: every constraint holds with posterior probability
// at least sureFeasible (by the observed values when the fit fails).
func (s *Study) judgedOutputs(it int) ([]Trial, [][]float64, []bool) {
	var done []Trial
	for _, t := range s.trials {
		if t.Status == Complete && len(t.Outputs) == len(s.info.Outputs) {
			done = append(done, t)
		}
	}
	n := len(done)
	judged, sure := make([][]float64, n), make([]bool, n)
	for i, t := range done {
		judged[i] = orientedRowOf(s.info, t.Outputs, nil)
	}
	// The record is the study's, not this process's: a signal must not
	// change it, so the fit runs to its end.
	st, _, err := s.multiState(context.Background(), it)
	if err != nil || st == nil {
		for i := range n {
			sure[i] = orientedFeasible(s.info, judged[i])
		}
		return done, judged, sure
	}
	for i := range n {
		sure[i] = true
	}
	mean, vr := make([]float64, n), make([]float64, n)
	for k, o := range st.Outputs {
		o.GP.Predict(st.X, mean, vr)
		// Oriented, a constraint holds where its value is ≥ 0, which is
		// ToModel(0) in model units (ToValue increases).
		bound := o.ToModel(0)
		for i := range n {
			judged[i][k] = o.ToValue(mean[i])
			if s.info.Outputs[k].Goal == sdk.Constraint {
				sd := math.Sqrt(math.Max(vr[i], 0))
				sure[i] = sure[i] && acq.NormCDF((mean[i]-bound)/sd) >= sureFeasible
			}
		}
	}
	return done, judged, sure
}

// sureFeasible is the posterior probability with which the user's rule
// asks every constraint to hold at a trial it calls feasible. The best
// trials of a constrained study lie beside a constraint's boundary, where
// a noisy constraint's mean alone (probability ½) called truly infeasible
// trials feasible and the best of them was, more often than not, one of
// those: the user would be handed a trial that breaks the constraint.
const sureFeasible = 0.95

// orientedRowOf returns the outputs oriented (see orientation), in dst
// when it has room.
func orientedRowOf(info sdk.Info, outs []float64, dst []float64) []float64 {
	if len(outs) != len(info.Outputs) {
		return nil
	}
	if len(dst) != len(outs) {
		dst = make([]float64, len(outs))
	}
	for k, o := range info.Outputs {
		dst[k] = orientationOf(o).apply(outs[k])
	}
	return dst
}

// objectiveValues returns the oriented objective outputs of outs.
func objectiveValues(info sdk.Info, outs []float64) []float64 {
	objs := info.Objectives()
	out := make([]float64, len(objs))
	for a, k := range objs {
		out[a] = orientationOf(info.Outputs[k]).apply(outs[k])
	}
	return out
}

func hasConstraint(info sdk.Info) bool {
	return len(info.Objectives()) < len(info.Outputs)
}
