package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A run flag given without the setting it needs is refused in one line
// (exit 2) rather than ignored, and nothing is written.
func TestRunFlagDeps(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "curve.go"), curveScript)
	for _, c := range []struct{ args, want []string }{
		{[]string{"--warm-start-mode", "prior"}, []string{"--warm-start-mode has no effect here: it needs --warm-start STUDY"}},
		{[]string{"--batch-max", "4"}, []string{"--batch-max", "needs --batch auto"}},
		{[]string{"--batch", "3", "--batch-min-gain", "0.1"}, []string{"--batch-min-gain", "needs --batch auto"}},
		{[]string{"--batch-rel-gain", "0.1"}, []string{"--batch-rel-gain", "needs --batch auto"}},
		{[]string{"--model", "exact", "--local-points", "100"}, []string{"--local-points", "needs --model local or auto"}},
		{[]string{"--pruner-warmup", "2"}, []string{"--pruner-warmup", "needs --pruner median"}},
		{[]string{"--pruner", "asha", "--pruner-startup", "2"}, []string{"--pruner-startup", "needs --pruner median"}},
		{[]string{"--pruner", "hyperband", "--pruner-min-trials", "2"}, []string{"--pruner-min-trials", "needs --pruner median"}},
		{[]string{"--pruner", "median", "--pruner-eta", "3"}, []string{"--pruner-eta", "needs --pruner asha or hyperband"}},
		{[]string{"--pruner-min-step", "2"}, []string{"--pruner-min-step", "needs --pruner asha or hyperband"}},
		{[]string{"--pruner", "median", "--pruner-max-step", "9"}, []string{"--pruner-max-step", "needs --pruner asha or hyperband"}},
	} {
		args := append([]string{"run", "--objective", "curve", "--plugins", plugins, "--db", "u.db"}, c.args...)
		checkUsageError(t, cli(t, dir, args...), c.want)
	}
	if _, err := os.Stat(filepath.Join(dir, "u.db")); !os.IsNotExist(err) {
		t.Fatalf("a refused run wrote its database: %v", err)
	}
	// With what they need, the same flags run.
	for _, args := range [][]string{
		{"--pruner", "median", "--pruner-warmup", "2", "--pruner-startup", "2"},
		{"--pruner", "asha", "--pruner-eta", "2", "--pruner-min-step", "2"},
		{"--model", "local", "--local-points", "50"},
	} {
		args = append([]string{"run", "--objective", "curve", "--acq", "random", "--init", "3", "--iters", "2", "--plugins", plugins, "--db", "v.db"}, args...)
		if r := cli(t, dir, args...); r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}
