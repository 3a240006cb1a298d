package main

import (
	"math"
	"strconv"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/pareto"
	"github.com/tesbo/tesbo/sdk"
)

// The outputs of a study whose objective declares several (sdk.Info.Outputs)
// as 'trials' shows them: one column (json: one key of "outputs") per
// output, by name, and "feasible": whether every constraint holds.

// outputNames returns the declared outputs' names (nil for one output).
func outputNames(info sdk.Info) []string {
	var names []string
	for _, o := range info.Outputs {
		names = append(names, o.Name)
	}
	return names
}

// setOutputs fills r's outputs and feasibility from a complete trial t.
func setOutputs(r *trialRow, info sdk.Info, t host.Trial) {
	if len(info.Outputs) == 0 || t.Status != host.Complete || len(t.Outputs) != len(info.Outputs) {
		return
	}
	r.Outputs = make(map[string]float64, len(t.Outputs))
	for k, o := range info.Outputs {
		r.Outputs[o.Name] = t.Outputs[k]
	}
	feasible := info.Feasible(t.Outputs)
	r.Feasible = &feasible
}

// outputCells are r's output cells, in names' order, then "feasible"
// (empty cells for a trial without outputs); none when names is empty.
func outputCells(r trialRow, names []string, format func(float64) string) []string {
	if len(names) == 0 {
		return nil
	}
	cells := make([]string, 0, len(names)+1)
	for _, n := range names {
		v, ok := r.Outputs[n]
		if !ok {
			cells = append(cells, "")
			continue
		}
		cells = append(cells, format(v))
	}
	feas := ""
	if r.Feasible != nil {
		feas = strconv.FormatBool(*r.Feasible)
	}
	return append(cells, feas)
}

// outputHead is the header cells of outputCells.
func outputHead(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	return append(append([]string(nil), names...), "feasible")
}

// trialRank is what "best" means to --best and --sort value. Trials
// compare by tier first (lower is better), then by value in the sense of
// minimize.
type trialRank struct {
	minimize bool        // one value: Info.Minimize; several outputs: the first objective's goal
	tier     map[int]int // by trial ID; nil (every tier 0) for one value
}

// infeasibleTier is the tier of a trial whose constraints do not all hold.
const infeasibleTier = math.MaxInt32

// rankOf returns the ranking of info's trials. For one value it is the
// value in the objective's sense. For several outputs (the value column
// is then the first objective's) feasible trials come before infeasible
// ones; with several objectives, feasible trials are further tiered by
// Pareto rank of their observed objective values — 0 for those no other
// feasible trial dominates, 1 for those only rank-0 trials dominate, and so
// on — and only within a tier by the first objective.
func rankOf(info sdk.Info, rows []trialRow) trialRank {
	objs := info.Objectives()
	if len(info.Outputs) == 0 || len(objs) == 0 {
		return trialRank{minimize: info.Minimize}
	}
	rank := trialRank{minimize: info.Outputs[objs[0]].Goal == sdk.Minimize, tier: map[int]int{}}
	var ids []int
	var Y [][]float64
	for _, r := range rows {
		if r.Feasible == nil {
			continue
		}
		if !*r.Feasible {
			rank.tier[r.ID] = infeasibleTier
			continue
		}
		y := make([]float64, len(objs))
		for j, k := range objs {
			y[j] = r.Outputs[info.Outputs[k].Name]
			if info.Outputs[k].Goal == sdk.Minimize {
				y[j] = -y[j] // pareto maximizes
			}
		}
		ids, Y = append(ids, r.ID), append(Y, y)
	}
	if len(objs) > 1 {
		for id, t := range pareto.Ranks(Y) {
			rank.tier[ids[id]] = t
		}
	}
	return rank
}
