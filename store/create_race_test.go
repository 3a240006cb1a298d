package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Several handles creating the same new file at once — two `tesbo-host run`
// started together in one directory — all open it, and every study each
// writes is there afterwards: no handle fails on the other's creation, and
// none removes a file another handle is using. Odd rounds start from an
// empty file, which the handles initialize together.
func TestConcurrentCreate(t *testing.T) {
	ctx := context.Background()
	for round := range 30 {
		dir := t.TempDir()
		path := filepath.Join(dir, "race.db")
		if round%2 == 1 {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		const n = 4
		var wg sync.WaitGroup
		errs := make([]error, n)
		for g := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := Open(path, Options{Create: true})
				if err != nil {
					errs[g] = err
					return
				}
				defer d.Close()
				s := &Study{Name: fmt.Sprint("s", g), Space: json.RawMessage(`[]`), Settings: json.RawMessage(`{}`)}
				errs[g] = d.CreateStudy(ctx, s)
			}()
		}
		wg.Wait()
		for g, err := range errs {
			if err != nil {
				t.Fatalf("round %d, handle %d: %v", round, g, err)
			}
		}
		d, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		names, err := d.StudyNames(ctx)
		d.Close()
		if err != nil || len(names) != n {
			t.Fatalf("round %d: studies %v (%v), want %d", round, names, err, n)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 1 {
			t.Fatalf("round %d: files left: %v", round, files)
		}
	}
}

// A creation removes what killed creations of the same file left beside
// it, once old enough to be nobody's work in progress, and nothing else;
// a durable creation syncs the directory and opens as any other.
func TestCreateSweepsStale(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.db")
	old := time.Now().Add(-2 * staleTempAge)
	files := map[string]bool{ // name → should survive
		"s.db.new-11-22":     false,
		"s.db.new-11-22-wal": false,
		"s.db.new-33-44":     true, // recent: maybe another creation's
		"t.db.new-11-22":     true, // another database's
		"s.db.bak":           true,
	}
	for name := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if name != "s.db.new-33-44" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	d, err := Open(path, Options{Create: true, Durable: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for name, keep := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if got := err == nil; got != keep {
			t.Errorf("%s: present %v, want %v", name, got, keep)
		}
	}
}
