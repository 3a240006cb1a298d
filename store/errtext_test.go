package store

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestErrorTextStored: a trial's error is stored cut to MaxErrorBytes,
// with a marker, and as valid UTF-8 without NUL bytes, which PostgreSQL's
// text would refuse (the report would fail with a raw SQLSTATE); run on
// PostgreSQL by TestPostgres.
func TestErrorTextStored(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	if err := d.AddBatch(ctx, s.ID, Iteration{}, []Trial{{ID: 0, X: []float64{1}, U: []float64{0.5}}}); err != nil {
		t.Fatal(err)
	}
	huge := "bad \x00 byte \xff " + strings.Repeat("e", 3<<20)
	if err := d.FinishTrial(ctx, s.ID, &Trial{ID: 0, Status: Failed, Error: huge}); err != nil {
		t.Fatal(err)
	}
	ts, err := d.Trials(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := ts[0].Error
	if len(got) > MaxErrorBytes || !utf8.ValidString(got) || strings.ContainsRune(got, 0) ||
		!strings.HasPrefix(got, `bad \x00 byte `+"\uFFFD") || !strings.HasSuffix(got, " bytes cut)") {
		t.Fatalf("stored error of %d bytes: %.60q … %q", len(got), got, got[max(0, len(got)-30):])
	}
}
