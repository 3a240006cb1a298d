package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// joinedSlots returns the parallel field of the "joining the study as a
// worker" log line of a command's stderr (-1: none).
func joinedSlots(t *testing.T, stderr string) int {
	t.Helper()
	for _, l := range strings.Split(stderr, "\n") {
		var rec struct {
			Message  string `json:"message"`
			Parallel int    `json:"parallel"`
		}
		if json.Unmarshal([]byte(l), &rec) == nil && rec.Message == "joining the study as a worker" {
			return rec.Parallel
		}
	}
	return -1
}

// resume on a study workers share joins it with the study's --parallel
// evaluation slots unless given its own (the help's "default: the
// study's"), not with one.
func TestResumeJoinsWithStudyParallel(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	r := cli(t, dir, "run", "--db", url, "--study", "p", "--objective", "nap", "--acq", "random", "--init", "3", "--iters", "1", "--batch", "3",
		"--parallel", "3", "--plugins", plugins, "--log-level", "info")
	if r.code != 0 || joinedSlots(t, r.stderr) != 3 {
		t.Fatalf("run: exit %d, joined with %d slots: %s", r.code, joinedSlots(t, r.stderr), r.stderr)
	}
	r = cli(t, dir, "resume", "--db", url, "--study", "p", "--iters", "2", "--plugins", plugins, "--log-level", "info")
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	if n := joinedSlots(t, r.stderr); n != 3 {
		t.Fatalf("resume joined with %d slots, want the study's 3", n)
	}
	r = cli(t, dir, "resume", "--db", url, "--study", "p", "--iters", "3", "--parallel", "2", "--plugins", plugins, "--log-level", "info")
	if n := joinedSlots(t, r.stderr); r.code != 0 || n != 2 {
		t.Fatalf("resume --parallel 2: exit %d, joined with %d slots: %s", r.code, n, r.stderr)
	}
	checkTrialsCLI(t, dir, url, "p", 3+3*3)
}

// The coordinator of a study workers share ('run' on PostgreSQL) ends with
// the summary table of a single-process run — the best observed trial and
// the recommendation x̄ — whose best observed value is that of
// 'trials --best 1'.
func TestWorkerCoordinatorSummary(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	r := cli(t, dir, "run", "--db", url, "--study", "s", "--objective", "nap", "--acq", "qei", "--init", "3", "--iters", "3", "--batch", "2",
		"--plugins", plugins, "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "recommended x") {
		t.Fatalf("the coordinator ended without the summary:\n%s", r.stdout)
	}
	best := trialsJSON(t, dir, "--db", url, "--study", "s", "--best", "1")
	if len(best) != 1 || best[0].Value == nil {
		t.Fatalf("trials --best 1: %+v", best)
	}
	for _, want := range []string{
		"study           s (in ",
		"objective       nap",
		"evaluations     9 complete, 0 failed",
		fmt.Sprintf("best observed   %s (max)", strconv.FormatFloat(*best[0].Value, 'g', 6, 64)),
		"recommendation  ",
		"recommended x   x = ",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("the coordinator's output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "recommendation  - (") {
		t.Fatalf("no recommendation:\n%s", r.stdout)
	}

	// A worker study none of whose evaluations completed exits 1 with the
	// one line a single-process run gives.
	writeFile(t, filepath.Join(plugins, "fail.go"), failScript)
	url = pg.NewDatabase(t)
	r = cli(t, dir, "run", "--db", url, "--study", "f", "--objective", "fail", "--acq", "random", "--init", "2", "--iters", "1", "--batch", "2",
		"--plugins", plugins, "--log-level", "error")
	if lines := errorLines(r.stderr); r.code != 1 || len(lines) != 1 || !strings.Contains(lines[0], "every evaluation failed (4 of 4)") ||
		!strings.Contains(r.stdout, "0 complete, 4 failed") {
		t.Fatalf("all failed: exit %d, stderr %q, stdout:\n%s", r.code, lines, r.stdout)
	}
}
