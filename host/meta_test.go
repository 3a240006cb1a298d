package host

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// cleanMeta keeps entries in key order within MaxMetaKeys and
// MaxMetaBytes, leaves out bad keys, escapes values' control characters,
// and counts what it left out.
func TestCleanMeta(t *testing.T) {
	big := map[string]string{}
	for i := range 100 {
		big[fmt.Sprintf("k%03d", i)] = "v"
	}
	got, dropped := cleanMeta(big)
	if dropped != 36 || len(got) != MaxMetaKeys+1 || got["k063"] != "v" || got["k064"] != "" || got[metaDroppedKey] != "36" {
		t.Errorf("100 keys: kept %d, dropped %d (%q)", len(got), dropped, got[metaDroppedKey])
	}
	huge := map[string]string{"a": strings.Repeat("x", MaxMetaBytes), "b": "small"}
	if got, dropped := cleanMeta(huge); dropped != 1 || got["b"] != "small" || got["a"] != "" {
		t.Errorf("a value of MaxMetaBytes: %d dropped, kept keys %d", dropped, len(got))
	}
	bad := map[string]string{"": "empty", "k\x1b[31m": "esc", strings.Repeat("k", maxMetaKey+1): "long", "ok": "val\nue\x1b[2J\xff"}
	got, dropped = cleanMeta(bad)
	if dropped != 3 || got["ok"] != `val\x0aue\x1b[2J\xff` || len(got) != 2 {
		t.Errorf("bad keys and a value with control characters: %q, %d dropped", got, dropped)
	}
	if got, dropped := cleanMeta(map[string]string{"test_accuracy": "0.91"}); dropped != 0 || len(got) != 1 || got["test_accuracy"] != "0.91" {
		t.Errorf("ordinary metadata changed: %q", got)
	}
}

// A trial keeps only what cleanMeta keeps of its evaluation's metadata
// (here through Tell; a worker's report takes the same rule).
func TestTellKeepsBoundedMeta(t *testing.T) {
	ctx := context.Background()
	s, tr := oneTrialStudy(t)
	meta := map[string]string{"log": strings.Repeat("x", 2*MaxMetaBytes), "acc": "0.5"}
	if err := s.TellResult(ctx, tr.ID, sdk.Result{Value: 1, Meta: meta}, nil); err != nil {
		t.Fatal(err)
	}
	got := s.Trials()[tr.ID].Meta
	if got["acc"] != "0.5" || got["log"] != "" || got[metaDroppedKey] != "1" {
		t.Fatalf("stored metadata %d keys (%q dropped), want acc kept and the 128 KiB log left out", len(got), got[metaDroppedKey])
	}
}

// oneTrialStudy is an in-memory study of one parameter with its first
// trial asked (not told).
func oneTrialStudy(t *testing.T) (*Study, Trial) {
	t.Helper()
	ctx := context.Background()
	s, err := NewStudy(ctx, unitInfo(1), Options{Acquisition: "random", Init: 1, Iters: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.Ask(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	return s, ts[0]
}
