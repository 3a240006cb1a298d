package main

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
	"github.com/tesbo/tesbo/store"
)

// tradeoffOutputs is the function of examples/go-outputs,
// examples/script-outputs and examples/python-objective/tradeoff.py.
func tradeoffOutputs(x []float64) []float64 {
	cost := (x[0]-0.2)*(x[0]-0.2) + (x[1]-0.5)*(x[1]-0.5)
	loss := (x[0]-0.8)*(x[0]-0.8) + (x[1]-0.5)*(x[1]-0.5)
	return []float64{cost, loss, x[0] + x[1]}
}

// TestE2EOutputsEveryPluginKind: the same objective of two minimized
// outputs and a constraint as a Go plugin directory, a Yaegi script and a
// Python plugin runs through 'tesbo-host run --json' (the several-output
// default acquisition, no fallback): every trial stores its three outputs,
// every record carries the Pareto set, its hypervolume and the feasible
// fraction, and 'trials' shows the outputs by name with feasibility. The
// Python case needs python3-grpcio: skipped without it, except under CI.
func TestE2EOutputsEveryPluginKind(t *testing.T) {
	kinds := []struct {
		name, objective string
		dir             func(t *testing.T) (string, []string)
	}{
		{"go", "tradeoff", func(t *testing.T) (string, []string) {
			dir := t.TempDir()
			linkInto(t, dir, "tradeoff", "../../examples/go-outputs")
			env, _ := goBuildEnv(t)
			return dir, env
		}},
		{"script", "tradeoff", func(t *testing.T) (string, []string) {
			dir := t.TempDir()
			linkInto(t, dir, "tradeoff.go", "../../examples/script-outputs/tradeoff.go")
			return dir, nil
		}},
		{"python", "tradeoff-py", func(t *testing.T) (string, []string) {
			return testenv.PythonPlugin(t, "../../examples/python-objective/tradeoff.py", "tradeoff-py"), nil
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			dir, env := k.dir(t)
			work := t.TempDir()
			r := cliEnv(t, work, env, "run", "--plugins", dir, "--objective", k.objective, "--iters", "3", "--batch", "2",
				"--init", "4", "--seed", "5", "--db", "e.db", "--study", "e", "--json", "--log-level", "warn")
			if r.code != 0 || strings.Contains(r.stderr, "instead of the acquisition's") {
				t.Fatalf("exit %d:\n%s", r.code, r.stderr)
			}
			checkOutputRecords(t, r.stdout, 3)
			trials, _ := loadTrials(t, filepath.Join(work, "e.db"), "e")
			if len(trials) != 10 {
				t.Fatalf("%d trials, want 10", len(trials))
			}
			for _, tr := range trials {
				want := tradeoffOutputs(tr.X)
				if tr.Status != store.Complete || len(tr.Outputs) != 3 {
					t.Fatalf("trial %+v", tr)
				}
				for j := range want {
					if math.Abs(tr.Outputs[j]-want[j]) > 1e-12 {
						t.Fatalf("trial %d: outputs %v, want %v", tr.ID, tr.Outputs, want)
					}
				}
			}
			checkOutputTrials(t, work, trials)
		})
	}
}

// checkOutputRecords checks the --json records of a several-output study.
func checkOutputRecords(t *testing.T, stdout string, iters int) {
	t.Helper()
	n := 0
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var rec struct {
			Outputs [][]float64 `json:"outputs"`
			Pareto  *struct {
				Trials  []int       `json:"trials"`
				Outputs [][]float64 `json:"outputs"`
			} `json:"pareto"`
			Hypervolume      *float64  `json:"hypervolume"`
			RefPoint         []float64 `json:"ref_point"`
			FeasibleFraction *float64  `json:"feasible_fraction"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("record %q: %v", sc.Text(), err)
		}
		if len(rec.Outputs) != 2 || rec.Pareto == nil || len(rec.Pareto.Trials) == 0 || rec.Hypervolume == nil ||
			!(*rec.Hypervolume >= 0) || len(rec.RefPoint) != 2 || rec.FeasibleFraction == nil {
			t.Fatalf("record lacks the several-output fields: %s", sc.Text())
		}
		for _, o := range rec.Pareto.Outputs {
			if o[2] > 1.2 {
				t.Fatalf("an infeasible trial in the Pareto set: %s", sc.Text())
			}
		}
		n++
	}
	if n != iters {
		t.Fatalf("%d records, want %d:\n%s", n, iters, stdout)
	}
}

// checkOutputTrials checks 'trials' of a several-output study in each format.
func checkOutputTrials(t *testing.T, work string, trials []store.Trial) {
	t.Helper()
	r := cli(t, work, "trials", "--db", "e.db", "--study", "e", "--format", "json")
	if r.code != 0 {
		t.Fatalf("trials: exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	for i, l := range lines {
		var row struct {
			Outputs  map[string]float64 `json:"outputs"`
			Feasible *bool              `json:"feasible"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		tr := trials[i]
		if row.Outputs["cost"] != tr.Outputs[0] || row.Outputs["loss"] != tr.Outputs[1] || row.Outputs["budget"] != tr.Outputs[2] ||
			row.Feasible == nil || *row.Feasible != (tr.Outputs[2] <= 1.2) {
			t.Fatalf("trials json row %s for outputs %v", l, tr.Outputs)
		}
	}
	r = cli(t, work, "trials", "--db", "e.db", "--study", "e", "--format", "csv")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "id,state,x0,x1,cost,loss,budget,feasible,value,") {
		t.Fatalf("trials csv: exit %d\n%s", r.code, r.stdout)
	}
	r = cli(t, work, "trials", "--db", "e.db", "--study", "e")
	if r.code != 0 || !strings.Contains(strings.Join(strings.Fields(strings.SplitN(r.stdout, "\n", 2)[0]), " "), "cost loss budget feasible VALUE") {
		t.Fatalf("trials table: exit %d\n%s", r.code, r.stdout)
	}
}

// TestE2EOutputsBadInput: a reference point of the wrong length and an
// acquisition without a several-output form are refused with one line and
// exit status 2, before anything is stored.
func TestE2EOutputsBadInput(t *testing.T) {
	dir := t.TempDir()
	linkInto(t, dir, "tradeoff.go", "../../examples/script-outputs/tradeoff.go")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--ref-point", "1"}, "reference point has 1 values, want one per objective output (2)"},
		{[]string{"--ref-point", "1,nan"}, "reference point value 1 is NaN"},
		{[]string{"--acq", "ei"}, "acquisition ei cannot optimize objective tradeoff's 3 outputs"},
	} {
		args := append([]string{"run", "--plugins", dir, "--objective", "tradeoff", "--iters", "1", "--db", "e.db"}, c.args...)
		r := cli(t, t.TempDir(), args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || len(errorLines(r.stderr)) != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q on one line", c.args, r.code, r.stderr, c.want)
		}
	}
}

// TestE2EOutputsBadInfo: a script declaring a constraint without a bound,
// or two outputs of one name, is refused with one line naming the output
// and exit status 2.
func TestE2EOutputsBadInfo(t *testing.T) {
	src, err := os.ReadFile("../../examples/script-outputs/tradeoff.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, edit := range map[string][2]string{
		"nobound": {"Bound: sdk.Bound(1.2)", ""},
		"dup":     {`Name: "loss"`, `Name: "cost"`},
	} {
		if err := os.WriteFile(filepath.Join(dir, name+".go"), []byte(strings.Replace(string(src), edit[0], edit[1], 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"nobound": `output 2 ("budget"): a constraint needs a Bound`,
		"dup":     `output 1 ("cost"): duplicate name`,
	} {
		r := cli(t, t.TempDir(), "run", "--plugins", dir, "--objective", name, "--iters", "1", "--db", "e.db")
		if r.code != 2 || !strings.Contains(r.stderr, want) || len(errorLines(r.stderr)) != 1 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q on one line", name, r.code, r.stderr, want)
		}
	}
}
