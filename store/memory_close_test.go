package store

import (
	"context"
	"errors"
	"testing"
)

// A closed Memory handle fails its calls as a closed database does, so a
// use after Close shows in tests on memory as it would on SQLite.
func TestMemoryClose(t *testing.T) {
	ctx := context.Background()
	d := NewMemory()
	if _, err := d.StudyNames(ctx); err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := d.StudyNames(ctx); !errors.Is(err, errMemoryClosed) {
		t.Fatalf("StudyNames after Close: %v, want errMemoryClosed", err)
	}
}
