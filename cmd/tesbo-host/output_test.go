package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host"
)

// The progress bar and the iteration log line show the best observed value
// and the recommendation's apart, each under its own name.
func TestIterationOutputNamesBothValues(t *testing.T) {
	obs, rec, regret := -5.18, -15.18, 0.5
	r := host.Record{Iter: 3, Evals: 8, BestObserved: &obs, BestValue: &rec, Regret: &regret}
	if got, want := barLabel(r), "iter 3  best observed -5.18  recommendation -15.18  regret 0.5"; got != want {
		t.Fatalf("bar label %q, want %q", got, want)
	}
	var buf bytes.Buffer
	o := &output{log: zerolog.New(&buf)}
	o.onIteration(r)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	if line["best_observed"] != obs || line["recommendation"] != rec || line["best_value"] != nil {
		t.Fatalf("iteration log line %s: want best_observed %v and recommendation %v", strings.TrimSpace(buf.String()), obs, rec)
	}
}

// The final error line may quote a plugin's words (an Info error): its
// control characters are escaped, never sent to the terminal raw.
func TestPrintErrorEscapes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stderr
	os.Stderr = w
	printError("plugin returned an error: bad\x1b]0;PWNED\a\x1b[2J")
	os.Stderr = saved
	w.Close()
	out, _ := io.ReadAll(r)
	if want := "tesbo-host: plugin returned an error: bad\\x1b]0;PWNED\\x07\\x1b[2J\n"; string(out) != want {
		t.Fatalf("printed %q, want %q", out, want)
	}
}
