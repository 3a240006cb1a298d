package store

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
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
