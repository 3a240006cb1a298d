package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// momentumScript is a Yaegi objective with a conditional parameter:
// momentum only for SGD. It fails any evaluation where momentum's
// presence does not match the optimizer (an inactive value reached it).
const momentumScript = `package momentum

import (
	"context"
	"fmt"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

var info = sdk.Info{Name: "momentum", Minimize: true, Params: []sdk.Param{
	{Name: "lr", Kind: sdk.LogFloat, Low: 1e-5, High: 1},
	{Name: "optimizer", Kind: sdk.Categorical, Choices: []string{"sgd", "adam"}},
	{Name: "momentum", Kind: sdk.Float, Low: 0, High: 0.99,
		ActiveIf: &sdk.Condition{Parent: "optimizer", Values: []string{"sgd"}}},
}}

func Info() sdk.Info { return info }

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	v := sdk.Values(info, x)
	if v.Active("momentum") != (v.Choice("optimizer") == "sgd") {
		return 0, fmt.Errorf("momentum %v reached the objective with optimizer %s", x[2], v.Choice("optimizer"))
	}
	l := math.Log10(v.Float("lr"))
	if v.Choice("optimizer") == "sgd" {
		return (l+2)*(l+2) + math.Pow(v.Float("momentum")-0.9, 2), nil
	}
	return (l+3)*(l+3) + 0.05, nil
}
`

// conditionalRun runs objective in plugins and checks that every trial
// completed (the objectives fail a point where an inactive parameter
// reaches them), that both branches of parent were tried and that the
// trials' JSON leaves the inactive parameter child out exactly when
// parent is not on.
func conditionalRun(t *testing.T, plugins, objective, parent, child, on string) {
	t.Helper()
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	args := []string{"run", "--objective", objective, "--iters", "6", "--init", "4", "--db", db, "--study", "s", "--log-level", "error"}
	if plugins != "" {
		args = append(args, "--plugins", plugins)
	}
	if r := cli(t, dir, args...); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	r := cli(t, dir, "trials", "--db", db, "--study", "s", "--format", "json")
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var row struct {
			State   string             `json:"state"`
			Params  map[string]float64 `json:"params"`
			Choices map[string]string  `json:"choices"`
			Error   string             `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		if row.State != "complete" {
			t.Fatalf("trial %s: %s", l, row.Error)
		}
		_, has := row.Params[child]
		if has != (row.Choices[parent] == on) {
			t.Fatalf("trial %s: %s present %v with %s = %s", l, child, has, parent, row.Choices[parent])
		}
		seen[row.Choices[parent]] = true
	}
	if len(seen) < 2 {
		t.Fatalf("only %v tried", seen)
	}
}

// TestE2EConditional: a conditional space through every plugin kind — a
// Go plugin over gRPC (cond/branches of plugins/synthetic), a Yaegi
// script and a Python plugin — never sends an inactive parameter to the
// objective, and 'trials' shows only the active values.
func TestE2EConditional(t *testing.T) {
	t.Run("go-plugin", func(t *testing.T) { conditionalRun(t, "", "cond/branches", "branch", "y1", "c") })
	t.Run("yaegi", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "momentum.go"), momentumScript)
		conditionalRun(t, dir, "momentum", "optimizer", "momentum", "sgd")
	})
	t.Run("python", func(t *testing.T) {
		dir := testenv.PythonPlugin(t, "../../examples/python-objective/momentum.py", "momentum-py")
		conditionalRun(t, dir, "momentum-py", "optimizer", "momentum", "sgd")
	})
}
