package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
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

// A not-found error lists at most maxListed study names, quoted, and how
// many more there are.
func TestStudyListBounded(t *testing.T) {
	names := make([]string, 25)
	for i := range names {
		names[i] = fmt.Sprintf("s %d", i)
	}
	got := studyList(names)
	if !strings.HasPrefix(got, `studies: "s 0", "s 1"`) || !strings.HasSuffix(got, "and 15 more (tesbo-host serve lists them)") || strings.Contains(got, `"s 10"`) {
		t.Fatalf("studyList = %q", got)
	}
}
