package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
)

// TestRunWarmStart: --warm-start imports an earlier study's trials as
// observations (no initial design, the budget spent on new iterations
// only), trials --format json marks them, and a bad source or mode is one
// line with exit status 2.
func TestRunWarmStart(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	r := cli(t, dir, "run", "--objective", "synthetic/branin", "--iters", "4", "--db", db, "--study", "old", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	r = cli(t, dir, "run", "--objective", "synthetic/branin", "--iters", "3", "--db", db, "--study", "new", "--warm-start", "old", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("warm-started run: exit %d: %s", r.code, r.stderr)
	}
	// The summary counts the study's own evaluations, the imports apart.
	if !strings.Contains(r.stdout, "3 complete, 0 failed, 3 BO iterations; 6 trials imported by the warm start") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	r = cli(t, dir, "trials", "--db", db, "--study", "new", "--format", "json")
	var imported, iters int
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var row struct {
			Iter         int    `json:"iter"`
			ImportedFrom string `json:"imported_from"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		switch {
		case row.ImportedFrom == "old" && row.Iter == host.ImportedIteration:
			imported++
		case row.Iter >= 1:
			iters++
		default:
			t.Errorf("unexpected trial %s", l)
		}
	}
	if imported != 6 || iters != 3 {
		t.Fatalf("%d imported and %d new trials, want 6 (2 initial + 4) and 3", imported, iters)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--warm-start", "nope"}, `no study "nope"`},
		{[]string{"--warm-start", "old", "--warm-start-mode", "guess"}, "bad --warm-start-mode"},
	} {
		r := cli(t, dir, append([]string{"run", "--objective", "synthetic/branin", "--iters", "1", "--db", db, "--study", "bad"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// A warm start from a SQLite file that does not exist is refused before
// the file is created: a refused run writes nothing.
func TestWarmStartMissingDBWritesNothing(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, "run", "--objective", "synthetic/branin", "--db", "new.db", "--warm-start", "old")
	if r.code != 2 || !strings.Contains(r.stderr, "--warm-start old: new.db does not exist") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the refused run created new.db: %v", err)
	}
}
