package main

import (
	"path/filepath"
	"testing"

	"github.com/tesbo/tesbo/store"
)

// TestRunParamChangesSpace: a run parameter that changes the space
// (--param dim=3 of the any-dimension synthetic functions, served by the
// plugin) gives a 3-d study, evaluated without failures, that resume
// continues: the space is read after Configure, not before.
func TestRunParamChangesSpace(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "t.db")
	r := cli(t, dir, "run", "--objective", "synthetic/ackley", "--param", "dim=3", "--iters", "1", "--db", db, "--study", "s", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	r = cli(t, dir, "resume", "--db", db, "--study", "s", "--iters", "2", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	trials, _ := loadTrials(t, db, "s")
	if len(trials) != 4 { // 2 initial points + 2 iterations
		t.Fatalf("%d trials, want 4", len(trials))
	}
	for _, tr := range trials {
		if tr.Status != store.Complete || len(tr.X) != 3 {
			t.Errorf("trial %d: status %v, x %v (%s); want complete, 3 coordinates", tr.ID, tr.Status, tr.X, tr.Error)
		}
	}
}

// resume's plugins directory: --plugins, else $TESBO_PLUGINS, else the
// one stored with the study: a database from elsewhere does not choose the
// programs that run over what the user set (it did over $TESBO_PLUGINS).
func TestPluginsDirPrecedence(t *testing.T) {
	t.Setenv("TESBO_PLUGINS", "/env")
	if got := (&common{}).pluginsDir("/stored"); got != "/env" {
		t.Errorf("with $TESBO_PLUGINS: %s", got)
	}
	if got := (&common{plugins: "/flag"}).pluginsDir("/stored"); got != "/flag" {
		t.Errorf("with --plugins: %s", got)
	}
	t.Setenv("TESBO_PLUGINS", "")
	if got := (&common{}).pluginsDir("/stored"); got != "/stored" {
		t.Errorf("with neither: %s", got)
	}
	if got := (&common{}).pluginsDir(""); got != "plugins" {
		t.Errorf("nothing stored: %s", got)
	}
}
