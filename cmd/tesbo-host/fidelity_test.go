package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// flatScript declares no last step: it cannot be multi-fidelity.
const flatScript = `package flat

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "flat", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) { return x[0], nil }
`

// run --multi-fidelity stops the trials of a Yaegi script that reports
// its learning curve where the acquisition chose ('trials' shows them
// pruned at their step), and bad multi-fidelity flags are refused with
// one line and exit status 2.
func TestRunMultiFidelityScript(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "curve.go"), curveScript)
	writeFile(t, filepath.Join(plugins, "flat.go"), flatScript)
	r := cli(t, dir, "run", "--objective", "curve", "--init", "3", "--iters", "8", "--seed", "1", "--db", "t.db", "--study", "mf",
		"--plugins", plugins, "--multi-fidelity", "--fidelity-cost-fixed", "0")
	if r.code != 0 {
		t.Fatalf("run --multi-fidelity: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, dir, "trials", "--db", "t.db", "--study", "mf", "--format", "json")
	stopped, n := 0, 0
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var jt struct {
			State string            `json:"state"`
			Step  *int              `json:"step"`
			Meta  map[string]string `json:"meta"`
		}
		if err := json.Unmarshal([]byte(l), &jt); err != nil {
			t.Fatal(err)
		}
		n++
		if jt.State == "pruned" {
			stopped++
			if jt.Step == nil || *jt.Step >= 9 {
				t.Fatalf("trial stopped at the last step or none: %s", l)
			}
			if jt.Meta["fidelity_step"] != strconv.Itoa(*jt.Step) {
				t.Fatalf("trial stopped at step %d: meta %v, want its fidelity_step", *jt.Step, jt.Meta)
			}
		}
	}
	if n != 11 || stopped == 0 {
		t.Fatalf("%d trials, %d stopped early; want 11 and some:\n%s", n, stopped, r.stdout)
	}
	// The CSV has the metadata as meta.KEY columns.
	r = cli(t, dir, "trials", "--db", "t.db", "--study", "mf", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || len(recs) != 12 {
		t.Fatalf("trials --format csv: %v, %d rows:\n%s", err, len(recs), r.stdout)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	fs, ok := col["meta.fidelity_step"]
	if !ok {
		t.Fatalf("no meta.fidelity_step column: %v", recs[0])
	}
	for _, rec := range recs[1:] {
		if rec[col["state"]] == "pruned" && rec[fs] != rec[col["step"]] {
			t.Fatalf("stopped trial %s: meta.fidelity_step %q, step %q", rec[0], rec[fs], rec[col["step"]])
		}
	}
	for _, c := range []struct{ args, want []string }{
		{[]string{"--objective", "curve", "--multi-fidelity", "--fidelity-cost-fixed", "101"}, []string{"--fidelity-cost-fixed 101"}},
		{[]string{"--objective", "curve", "--multi-fidelity", "--fidelity-cost-fixed", "-1"}, []string{"--fidelity-cost-fixed -1"}},
		{[]string{"--objective", "curve", "--fidelity-cost-fixed", "1"}, []string{"needs --multi-fidelity"}},
		{[]string{"--objective", "curve", "--multi-fidelity", "--pruner", "asha"}, []string{"drop --pruner asha"}},
		{[]string{"--objective", "curve", "--multi-fidelity", "--acq", "ei"}, []string{"cannot choose fidelities"}},
		{[]string{"--objective", "flat", "--multi-fidelity"}, []string{"max step 0"}},
	} {
		args := append([]string{"run", "--plugins", plugins, "--db", "u.db"}, c.args...)
		checkUsageError(t, cli(t, dir, args...), c.want)
	}
}
