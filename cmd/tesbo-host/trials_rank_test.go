package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// outputRow is a complete trial of outputs cost, loss (both minimized) and
// budget ≤ 1; feasible says whether budget held.
func outputRow(id int, cost, loss float64, feasible bool) trialRow {
	v := cost
	return trialRow{ID: id, State: string(host.Complete), Value: &v,
		Outputs: map[string]float64{"cost": cost, "loss": loss}, Feasible: &feasible}
}

// --best and --sort value on several outputs, against a hand-ranked set:
// feasible trials first, by Pareto rank (an identical pair shares one),
// within a rank by the first objective (minimized: lowest first), then
// infeasible ones, then trials without a value.
func TestTrialsRankSeveralOutputs(t *testing.T) {
	info := sdk.Info{Outputs: []sdk.Output{
		{Name: "cost", Goal: sdk.Minimize},
		{Name: "loss", Goal: sdk.Minimize},
		{Name: "budget", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(1)},
	}}
	rows := []trialRow{
		outputRow(0, 1, 5, true),  // rank 0
		outputRow(1, 2, 2, true),  // rank 0
		outputRow(2, 3, 3, true),  // rank 1: 1 dominates it
		outputRow(3, 0, 9, false), // infeasible: would be rank 0
		outputRow(4, 2, 2, true),  // rank 0, equal to 1
		{ID: 5, State: string(host.Failed)},
		outputRow(6, 4, 4, true), // rank 2
	}
	rank := rankOf(info, rows)
	if got, want := rowIDs(selectTrials(rows, 0, "value", rank)), []int{0, 1, 4, 2, 6, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("--sort value: %v, want %v", got, want)
	}
	if got, want := rowIDs(selectTrials(rows, 3, "", rank)), []int{0, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("--best 3: %v, want %v", got, want)
	}

	// One objective (maximized) under a constraint: feasible first, by value.
	info.Outputs = []sdk.Output{
		{Name: "cost", Goal: sdk.Maximize},
		{Name: "budget", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(1)},
	}
	rank = rankOf(info, rows)
	if got, want := rowIDs(selectTrials(rows, 0, "value", rank)), []int{6, 2, 1, 4, 0, 3, 5}; !slices.Equal(got, want) {
		t.Errorf("one objective, --sort value: %v, want %v", got, want)
	}
}

func rowIDs(rows []trialRow) []int {
	out := make([]int, len(rows))
	for i, r := range rows {
		out[i] = r.ID
	}
	return out
}

// 'trials' on a PostgreSQL server that cannot be reached fails (exit 1)
// in one line: a fault of the moment, not bad input (exit 2).
func TestTrialsServerUnavailable(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, "trials", "--db", "postgres://postgres@/tesbo?host="+dir+"/no-server", "--study", "s")
	if r.code != 1 || !strings.Contains(r.stderr, "database server unavailable") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q; want 1 and one line saying the server is unavailable", r.code, r.stderr)
	}
}
