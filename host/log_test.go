package host

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
)

// tesOptions is a short tes-ep study: TES logs a debug summary of every
// model it builds, so its events are certain to occur.
func tesOptions() Options {
	return Options{Acquisition: "tes-ep", Batch: 1, Iters: 2, Init: 3, Seed: 1}
}

// TestZeroLoggerWritesNothing: an embedding program that leaves
// Options.Logger zero sees no log output at all from a TES study —
// neither through zerolog's global logger (pointed at a buffer here) nor
// on the process's stderr.
func TestZeroLoggerWritesNothing(t *testing.T) {
	var global bytes.Buffer
	oldLog, oldLevel := zlog.Logger, zerolog.GlobalLevel()
	zlog.Logger = zerolog.New(&global)
	zerolog.SetGlobalLevel(zerolog.TraceLevel)
	t.Cleanup(func() { zlog.Logger = oldLog; zerolog.SetGlobalLevel(oldLevel) })

	stderr := captureStderr(t)
	for _, name := range []string{"", "tes-ep"} { // the default acquisition and the paper's
		o := tesOptions()
		o.Acquisition = name
		if _, err := Optimize(context.Background(), &branin{}, o); err != nil {
			t.Fatal(err)
		}
	}
	if out := stderr(); out != "" {
		t.Errorf("a study with a zero Logger wrote to stderr: %q", out)
	}
	if global.Len() != 0 {
		t.Errorf("a study with a zero Logger wrote to zerolog's global logger: %q", global.String())
	}
}

// TestLoggerReceivesTESEvents: the logger an embedding program gives
// reaches the acquisition, so TES's debug events arrive there, tagged with
// the study.
func TestLoggerReceivesTESEvents(t *testing.T) {
	var buf bytes.Buffer
	o := tesOptions()
	o.Name = "logged"
	o.Logger = zerolog.New(&buf).Level(zerolog.DebugLevel)
	if _, err := Optimize(context.Background(), &branin{}, o); err != nil {
		t.Fatal(err)
	}
	var prepared int
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(line, `"message":"tes: prepared"`) {
			prepared++
			if !strings.Contains(line, `"study":"logged"`) || !strings.Contains(line, `"acq":"tes-ep"`) {
				t.Errorf("TES event without the study's fields: %s", line)
			}
		}
	}
	if prepared != o.Iters {
		t.Errorf("%d \"tes: prepared\" events for %d iterations; log:\n%s", prepared, o.Iters, buf.String())
	}
}

// captureStderr redirects os.Stderr to a pipe until the returned function
// is called; that function restores it and returns what was written.
func captureStderr(t *testing.T) func() string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	restored := false
	restore := func() string {
		if restored {
			return ""
		}
		restored = true
		os.Stderr = old
		w.Close()
		out := <-done
		r.Close()
		return out
	}
	t.Cleanup(func() { restore() })
	return restore
}
