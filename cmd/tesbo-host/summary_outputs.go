package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// printMultiSummary is the summary's tail for an objective with several
// outputs: the outputs, the evaluated Pareto set and its hypervolume, and
// for constraints the feasible fraction (and, with one objective, the best
// feasible trial).
func printMultiSummary(w io.Writer, info sdk.Info, m *host.MultiRecord) {
	fmt.Fprintf(w, "outputs\t%s\n", cell(describeOutputs(info)))
	if m == nil || m.Pareto == nil {
		fmt.Fprintf(w, "pareto set\tnone yet (no BO iteration finished)\n")
		return
	}
	if m.FeasibleFraction != nil {
		// A percentage: "1 of the complete trials" read as one trial.
		fmt.Fprintf(w, "feasible\t%.3g%% of the complete trials\n", 100**m.FeasibleFraction)
	}
	if b := m.BestFeasible; b != nil {
		fmt.Fprintf(w, "best feasible\ttrial %d, value %s at x = %s\n", b.Trial, fmtG(b.Value), fmtVec(b.X))
	}
	if len(info.Objectives()) < 2 {
		return
	}
	fmt.Fprintf(w, "pareto set\t%d trials %v (feasible, not dominated; judged by the posterior mean)\n", len(m.Pareto.Trials), m.Pareto.Trials)
	if m.Hypervolume != nil {
		how := "given"
		if m.RefPointDerived {
			how = "derived: nadir of the observed front − 10% of its range"
		}
		fmt.Fprintf(w, "hypervolume\t%s above the reference point %s (%s)\n", fmtG(*m.Hypervolume), fmtVec(m.RefPoint), how)
	} else if len(m.Pareto.Trials) > 0 {
		fmt.Fprintf(w, "hypervolume\tbeyond the largest float64 (the objectives' ranges multiply past 1.8e308): rescale the objectives\n")
	}
}

// describeOutputs renders the declared outputs as "cost (minimize), budget
// (≤ 1.2)".
func describeOutputs(info sdk.Info) string {
	var outs []string
	for _, o := range info.Outputs {
		d := o.Goal.String()
		if o.Goal == sdk.Constraint {
			op := "≤"
			if o.Feasible == sdk.AtLeast {
				op = "≥"
			}
			d = fmt.Sprintf("%s %s", op, fmtG(*o.Bound))
		}
		outs = append(outs, fmt.Sprintf("%s (%s)", o.Name, d))
	}
	return strings.Join(outs, ", ")
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func fmtVec(x []float64) string {
	s := make([]string, len(x))
	for i, v := range x {
		s[i] = fmtG(v)
	}
	return "(" + strings.Join(s, ", ") + ")"
}
