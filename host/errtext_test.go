package host

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/store"
)

// TestHugeErrorBounded: an objective whose error is 3 MiB (with NUL and
// invalid UTF-8) has it stored per trial, in memory and in the database,
// and logged cut to store.MaxErrorBytes with a marker saying how much was
// cut; errors.Is still sees the objective's error.
func TestHugeErrorBounded(t *testing.T) {
	ctx := context.Background()
	sentinel := errors.New(strings.Repeat("boom \x00\xff ", 3<<20/8))
	db, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var logs bytes.Buffer
	obj := funcObjective{info: unitInfo(1), f: func(context.Context, []float64) (float64, error) { return 0, sentinel }}
	s, err := NewStudy(ctx, unitInfo(1), Options{Proposer: randomProposer{}, Init: 2, Iters: 1, Batch: 1, Seed: 1,
		DB: wrap(db), Name: "huge", Logger: zerolog.New(&logs)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if res.Failures != 3 {
		t.Fatalf("%d failures, want 3", res.Failures)
	}
	row, err := db.Study(ctx, "huge")
	if err != nil {
		t.Fatal(err)
	}
	stored, err := db.Trials(ctx, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range append(s.Trials(), fromStoreTrials(stored)...) {
		if len(tr.Error) > store.MaxErrorBytes || !strings.HasPrefix(tr.Error, "boom ") ||
			!strings.HasSuffix(tr.Error, " bytes cut)") || strings.ContainsRune(tr.Error, 0) {
			t.Fatalf("trial %d (%d of memory, then the database): error of %d bytes, ends %q", i, len(s.Trials()), len(tr.Error), tr.Error[max(0, len(tr.Error)-40):])
		}
	}
	if logs.Len() > 64<<10 {
		t.Fatalf("the log holds %d bytes for 3 failures", logs.Len())
	}
	if err := boundedError(sentinel); !errors.Is(err, sentinel) || len(err.Error()) > store.MaxErrorBytes {
		t.Fatalf("boundedError: %d bytes, Is %v", len(err.Error()), errors.Is(err, sentinel))
	}
}
