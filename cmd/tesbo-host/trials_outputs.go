package main

import (
	"strconv"

	"github.com/tesbo/tesbo/host"
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
	feasible := true
	for k, o := range info.Outputs {
		r.Outputs[o.Name] = t.Outputs[k]
		feasible = feasible && o.Satisfied(t.Outputs[k])
	}
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
