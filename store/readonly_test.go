package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
)

// A database opened ReadOnly reads what others write (a live view), and
// every write fails with ErrReadOnly without touching the data.
func TestReadOnly(t *testing.T) {
	ctx := context.Background()
	d, path := newDB(t)
	s := newStudy(t, d, "a")
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: 0}, []Trial{{ID: 0, X: []float64{1}, U: []float64{0.5}}}); err != nil {
		t.Fatal(err)
	}
	if tr, err := ro.Trials(ctx, s.ID); err != nil || len(tr) != 1 {
		t.Fatalf("the read-only view does not see a later write: %v %+v", err, tr)
	}
	if err := ro.CreateStudy(ctx, &Study{Name: "b", Space: json.RawMessage(`[]`), Settings: json.RawMessage(`{}`)}); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("CreateStudy: %v, want ErrReadOnly", err)
	}
	if err := ro.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, nil); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("AddBatch: %v, want ErrReadOnly", err)
	}
	if err := ro.Migrate(ctx); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Migrate: %v, want ErrReadOnly", err)
	}
	if names, err := d.StudyNames(ctx); err != nil || len(names) != 1 {
		t.Fatalf("studies after refused writes: %v %v", names, err)
	}
}

// ReadOnly reads an older schema as it is (no migration, no WAL switch:
// the files are unchanged) and never creates a file.
func TestReadOnlyOldSchema(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "v1.db")
	writeV1(t, path)
	before := fileState(t, dir)
	d, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Study(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := d.Trials(ctx, s.ID); err != nil || len(tr) != 1 || tr[0].Value != 2.5 {
		t.Fatalf("trials: %v %+v", err, tr)
	}
	d.Close()
	sameFiles(t, before, fileState(t, dir))
	if _, err := Open(filepath.Join(dir, "new.db"), Options{ReadOnly: true}); err == nil {
		t.Fatal("a missing file opened read-only")
	}
	if _, err := Open(filepath.Join(dir, "new.db"), Options{ReadOnly: true, Create: true}); err == nil {
		t.Fatal("ReadOnly with Create accepted")
	}
	sameFiles(t, before, fileState(t, dir))
}
