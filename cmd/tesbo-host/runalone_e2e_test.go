package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tesbo/tesbo/store"
)

// A single-process SQLite study killed with kill -9 is refused by
// 'worker' (exit 2, one line pointing at resume, the trials untouched): in
// worker mode its trials would differ from an uninterrupted run's. resume
// then continues it.
func TestWorkerRefusesSingleProcessStudy(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "nap.go"), napScript)
	const init, iters, batch = 2, 30, 2
	p := start(t, dir, "run", "--objective", "nap", "--acq", "random", "--init", fmt.Sprint(init),
		"--iters", fmt.Sprint(iters), "--batch", fmt.Sprint(batch), "--db", "s.db", "--study", "alone",
		"--json", "--plugins", plugins, "--log-level", "error", "--eval-timeout", "5m")
	waitLines(t, p, 2)
	// While the run goes on, a worker is told the study is in use (wait,
	// then resume), not to resume it now, which would be refused.
	r := cli(t, dir, "worker", "--db", "s.db", "--study", "alone", "--plugins", plugins)
	checkUsageError(t, r, []string{"in use by"})
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	dbPath := filepath.Join(dir, "s.db")
	before, _ := loadTrials(t, dbPath, "alone")

	r = cli(t, dir, "worker", "--db", "s.db", "--study", "alone", "--plugins", plugins)
	checkUsageError(t, r, []string{"run by a single process", "tesbo-host resume --db s.db --study alone"})
	after, _ := loadTrials(t, dbPath, "alone")
	if len(after) != len(before) {
		t.Fatalf("the refused worker changed the trials: %d, then %d", len(before), len(after))
	}
	for i := range before {
		if before[i].Status != after[i].Status || before[i].Worker != after[i].Worker || after[i].Worker != "" {
			t.Fatalf("trial %d: %+v, then %+v", i, before[i], after[i])
		}
	}

	r = cli(t, dir, "resume", "--db", "s.db", "--study", "alone", "--json", "--plugins", plugins, "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("resume: %d %s", r.code, r.stderr)
	}
	done, _ := loadTrials(t, dbPath, "alone")
	if len(done) != init+iters*batch {
		t.Fatalf("%d trials after the resume", len(done))
	}
	for _, tr := range done {
		if tr.Status != store.Complete || tr.Worker != "" {
			t.Fatalf("trial %d: %s, worker %q", tr.ID, tr.Status, tr.Worker)
		}
	}
}
