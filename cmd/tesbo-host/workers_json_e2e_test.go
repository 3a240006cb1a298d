package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/testenv"
)

// A study workers share on PostgreSQL, run with --batch auto and --json:
// stdout holds one record per proposal, in order, covering the whole
// budget; resume --iters joins as a worker and raises the global budget.
func TestWorkersBatchAutoJSONResume(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	records := func(stdout string) (n, evals int) {
		t.Helper()
		for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
			var r host.Record
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatalf("stdout line %q: %v", l, err)
			}
			n++
			if r.Iter != n || len(r.Batch) < 1 || len(r.Batch) > 3 || len(r.Values) != len(r.Batch) {
				t.Fatalf("record %d: %+v", n, r)
			}
			evals += len(r.Batch)
		}
		return n, evals
	}
	r := cli(t, dir, "run", "--db", url, "--study", "a", "--objective", "nap", "--batch", "auto", "--batch-max", "3",
		"--iters", "3", "--init", "4", "--parallel", "2", "--plugins", plugins, "--json", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	if _, evals := records(r.stdout); evals != 3*3 {
		t.Fatalf("records cover %d evaluations, want 9:\n%s", evals, r.stdout)
	}
	checkTrialsCLI(t, dir, url, "a", 4+3*3)
	r = cli(t, dir, "resume", "--db", url, "--study", "a", "--iters", "5", "--parallel", "2", "--plugins", plugins, "--json", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	if _, evals := records(r.stdout); evals != 5*3 {
		t.Fatalf("records cover %d evaluations, want 15:\n%s", evals, r.stdout)
	}
	checkTrialsCLI(t, dir, url, "a", 4+5*3)
	r = cli(t, dir, "resume", "--db", url, "--study", "a", "--iters", "2", "--plugins", plugins)
	if r.code != 2 || !strings.Contains(r.stderr, "new total") {
		t.Fatalf("resume below the issued trials: exit %d: %s", r.code, r.stderr)
	}
}
