package main

import (
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// TestMultiSummaryFeasible: the feasible fraction prints as a percentage
// (a fraction of 1 once printed as "1 of the complete trials"), and the
// best feasible trial of a constrained single objective follows it.
func TestMultiSummaryFeasible(t *testing.T) {
	info := sdk.Info{Outputs: []sdk.Output{
		{Name: "loss", Goal: sdk.Minimize},
		{Name: "mem", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(1)},
	}}
	for _, c := range []struct {
		frac float64
		want string
	}{{1, "feasible\t100% of the complete trials\n"}, {0.25, "feasible\t25% of the complete trials\n"}} {
		frac := c.frac
		m := &host.MultiRecord{
			Pareto:           &host.ParetoSet{Trials: []int{3}},
			FeasibleFraction: &frac,
			BestFeasible:     &host.BestFeasible{Trial: 3, X: []float64{0.5}, Value: 0.2},
		}
		var b strings.Builder
		printMultiSummary(&b, info, m)
		if !strings.Contains(b.String(), c.want) || !strings.Contains(b.String(), "best feasible\ttrial 3") {
			t.Errorf("fraction %v: summary\n%s\nwant a line %q and the best feasible trial", c.frac, b.String(), c.want)
		}
	}
}
