package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/testenv"
)

// curveScript reports a learning curve q·(1 − e^(−k/2)) for k = 1…9 and
// stops when told to, returning its last value.
const curveScript = `package curve

import (
	"context"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "curve", MaxStep: 9, Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	q := 1 - (x[0]-0.3)*(x[0]-0.3)*4
	var v float64
	for k := 1; k <= 9; k++ {
		v = q * (1 - math.Exp(-float64(k)/2))
		if prune, err := sdk.Report(ctx, k, v); err != nil || prune {
			return v, err
		}
	}
	return v, nil
}
`

// run --pruner stops trials of a Yaegi script that reports its learning
// curve: 'trials' shows them pruned, with their last value and step (table,
// CSV and JSON, which also carries the curves), and the bad settings of
// the pruner flags are refused with one line and exit status 2.
func TestRunPrunerScript(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "curve.go"), curveScript)
	for _, p := range []string{"median", "asha", "hyperband"} {
		args := []string{"run", "--objective", "curve", "--acq", "random", "--init", "4", "--iters", "12",
			"--db", "t.db", "--study", p, "--plugins", plugins, "--pruner", p}
		if p != "median" {
			args = append(args, "--pruner-eta", "3")
		}
		r := cli(t, dir, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "pruned") {
			t.Fatalf("run --pruner %s: exit %d\n%s\n%s", p, r.code, r.stdout, r.stderr)
		}
		if o, _ := storedSettings(t, filepath.Join(dir, "t.db"), p); o.Pruning.Model != host.PruneModelCurve {
			t.Fatalf("run --pruner %s stored the pruner model %q, want the default %q", p, o.Pruning.Model, host.PruneModelCurve)
		}
		r = cli(t, dir, "trials", "--db", "t.db", "--study", p, "--format", "json")
		pruned := 0
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var jt struct {
				State         string       `json:"state"`
				Value         *float64     `json:"value"`
				Step          *int         `json:"step"`
				Intermediates [][2]float64 `json:"intermediates"`
			}
			if err := json.Unmarshal([]byte(l), &jt); err != nil {
				t.Fatal(err)
			}
			if jt.Step == nil || jt.Value == nil || len(jt.Intermediates) != *jt.Step {
				t.Fatalf("%s: trial %s", p, l)
			}
			if last := jt.Intermediates[len(jt.Intermediates)-1]; last[1] != *jt.Value || int(last[0]) != *jt.Step {
				t.Fatalf("%s: value %v is not the last report %v", p, *jt.Value, last)
			}
			if jt.State == "pruned" {
				pruned++
				if *jt.Step >= 9 {
					t.Fatalf("%s: pruned at the last step: %s", p, l)
				}
			}
		}
		if pruned == 0 {
			t.Fatalf("%s pruned nothing:\n%s", p, r.stdout)
		}
	}
	// The curve model: the GP over (x, step) proposes every point (EI
	// may well propose none the pruner stops: host's tests cover those).
	r := cli(t, dir, "run", "--objective", "curve", "--acq", "ei", "--init", "4", "--iters", "12",
		"--db", "t.db", "--study", "curve", "--plugins", plugins, "--pruner", "asha", "--pruner-model", "curve")
	if r.code != 0 || !strings.Contains(r.stdout, "12 BO iterations") || strings.Contains(r.stderr, "space-filling") {
		t.Fatalf("run --pruner-model curve: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, dir, "run", "--objective", "curve", "--acq", "random", "--init", "4", "--iters", "4",
		"--db", "t.db", "--study", "last", "--plugins", plugins, "--pruner", "median", "--pruner-model", "last")
	if r.code != 0 {
		t.Fatalf("run --pruner-model last: exit %d\n%s", r.code, r.stderr)
	}
	if o, _ := storedSettings(t, filepath.Join(dir, "t.db"), "last"); o.Pruning.Model != host.PruneModelLast {
		t.Fatalf("run --pruner-model last stored %q", o.Pruning.Model)
	}
	table := cli(t, dir, "trials", "--db", "t.db", "--study", "median")
	csv := cli(t, dir, "trials", "--db", "t.db", "--study", "median", "--format", "csv")
	if !strings.Contains(table.stdout, "STEP") || !strings.Contains(table.stdout, "pruned") ||
		!strings.HasSuffix(strings.SplitN(csv.stdout, "\n", 2)[0], ",step") {
		t.Fatalf("table or csv lack the state or the step:\n%s\n%s", table.stdout, csv.stdout)
	}
	for _, c := range []struct{ args, want []string }{
		{[]string{"--pruner", "nope"}, []string{`--pruner "nope"`}},
		{[]string{"--pruner", "asha", "--pruner-eta", "1"}, []string{"--pruner-eta 1"}},
		{[]string{"--pruner", "asha", "--pruner-eta", "101"}, []string{"--pruner-eta 101"}},
		{[]string{"--pruner", "median", "--pruner-warmup", "-1"}, []string{"--pruner-warmup -1"}},
		{[]string{"--pruner", "hyperband", "--pruner-max-step", "2000000"}, []string{"--pruner-max-step 2000000"}},
		{[]string{"--pruner", "median", "--pruner-model", "nope"}, []string{`--pruner-model "nope"`}},
		{[]string{"--pruner-model", "curve"}, []string{"needs a pruner"}},
		{[]string{"--pruner-model", "last"}, []string{"needs a pruner"}},
	} {
		args := append([]string{"run", "--objective", "curve", "--plugins", plugins, "--db", "u.db"}, c.args...)
		checkUsageError(t, cli(t, dir, args...), c.want)
	}
}

// On PostgreSQL, run joins the study as a worker, and the worker stops
// trials early as well.
func TestRunPrunerPostgres(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "curve.go"), curveScript)
	r := cli(t, dir, "run", "--objective", "curve", "--acq", "random", "--init", "4", "--iters", "12",
		"--db", url, "--study", "pg", "--plugins", plugins, "--pruner", "median")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	r = cli(t, dir, "trials", "--db", url, "--study", "pg", "--format", "csv")
	if r.code != 0 || !strings.Contains(r.stdout, ",pruned,") {
		t.Fatalf("no pruned trial on PostgreSQL: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Workers share the study: the default is the stand-in there, and the
	// curve model is refused before anything is stored.
	if o, _ := storedSettings(t, url, "pg"); o.Pruning.Model != host.PruneModelLast {
		t.Fatalf("stored pruner model %q on PostgreSQL, want %q", o.Pruning.Model, host.PruneModelLast)
	}
	checkUsageError(t, cli(t, dir, "run", "--objective", "curve", "--db", url, "--study", "pg-curve", "--plugins", plugins,
		"--pruner", "median", "--pruner-model", "curve"), []string{"one process"})
}
