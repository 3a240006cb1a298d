package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFix: --fix pins parameters in every trial of a run and of its
// resumption (the pins are stored with the study); a bad pin is one line
// on stderr and exit status 2.
func TestRunFix(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	r := cli(t, dir, "run", "--objective", "user/hpo4", "--iters", "2", "--init", "3", "--db", db, "--study", "s",
		"--fix", "layers=3", "--fix", "lr=0.001", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	r = cli(t, dir, "resume", "--db", db, "--study", "s", "--iters", "4", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	trials, _ := loadTrials(t, db, "s")
	if len(trials) != 7 {
		t.Fatalf("%d trials, want 7", len(trials))
	}
	for _, tr := range trials {
		if tr.X[0] != 0.001 || tr.X[1] != 3 {
			t.Errorf("trial %d: x %v, want lr = 0.001 and layers = 3", tr.ID, tr.X)
		}
	}
	for _, c := range []struct{ fix, want string }{
		{"nope=1", `no parameter "nope"`},
		{"layers=2.5", "not an integer"},
		{"layers=9", "outside"},
		{"dropout=x", "want a finite number"},
		{"dropout", "want NAME=VALUE"},
	} {
		r := cli(t, dir, "run", "--objective", "user/hpo4", "--iters", "1", "--db", filepath.Join(dir, "bad.db"), "--fix", c.fix)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("--fix %s: exit %d, stderr %q; want 2 and one line with %q", c.fix, r.code, r.stderr, c.want)
		}
	}
}
