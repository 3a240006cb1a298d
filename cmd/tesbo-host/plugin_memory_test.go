package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/store"
)

// hogScript allocates without bound for x > 0.5 (64 MiB at a time, never
// touched, so only a limit stops it).
const hogScript = `package hog

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Name: "hog", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

var keep [][]byte

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	for x[0] > 0.5 {
		keep = append(keep, make([]byte, 64<<20))
	}
	return x[0], nil
}
`

// TestPluginMemoryFlag: under --plugin-memory the evaluations of a script
// that allocates without bound fail with "out of memory" while the host
// runs the study to its end; a bad size is a usage error on every command
// that starts plugins.
func TestPluginMemoryFlag(t *testing.T) {
	plugins := t.TempDir()
	writeFile(t, filepath.Join(plugins, "hog.go"), hogScript)
	dir := t.TempDir()
	r := cli(t, dir, "run", "--plugins", plugins, "--objective", "hog", "--acq", "random",
		"--init", "4", "--iters", "1", "--db", "hog.db", "--study", "hog", "--plugin-memory", "512MiB")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	trials, _ := loadTrials(t, filepath.Join(dir, "hog.db"), "hog")
	hogs := 0
	for _, tr := range trials {
		switch {
		case tr.X[0] > 0.5:
			hogs++
			if tr.Status != store.Failed || !strings.Contains(tr.Error, "out of memory") {
				t.Errorf("trial %d at %v: %v %q, want a failure saying out of memory", tr.ID, tr.X, tr.Status, tr.Error)
			}
		case tr.Status != store.Complete:
			t.Errorf("trial %d at %v: %v %q", tr.ID, tr.X, tr.Status, tr.Error)
		}
	}
	if hogs == 0 {
		t.Fatal("no trial allocated (the test's premise)")
	}
	for _, args := range [][]string{
		{"run", "--objective", "grid", "--plugin-memory", "lots"},
		{"plugins", "--plugin-memory", "lots"},
		{"bench", "--problems", "synthetic/branin", "--acqs", "random", "--out", "out", "--plugin-memory", "lots"},
		{"resume", "--db", "hog.db", "--study", "hog", "--plugin-memory", "lots"},
	} {
		checkUsageError(t, cli(t, dir, args...), []string{"--plugin-memory", "lots"})
	}
}
