package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"

	"github.com/tesbo/tesbo/internal/testenv"
)

// TestNilLoggerDiscards: with Options.Logger nil the loader logs nothing,
// not even through zerolog's global logger (here a buffer), although
// discovery has something to report (a non-executable file, logged at
// debug level to a given logger).
func TestNilLoggerDiscards(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a plugin"), 0o644); err != nil {
		t.Fatal(err)
	}
	var global bytes.Buffer
	old := zlog.Logger
	zlog.Logger = zerolog.New(&global)
	t.Cleanup(func() { zlog.Logger = old })
	level := zerolog.GlobalLevel()
	zerolog.SetGlobalLevel(zerolog.TraceLevel)
	t.Cleanup(func() { zerolog.SetGlobalLevel(level) })

	r, err := Discover(ctxT(t), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if global.Len() != 0 {
		t.Errorf("nil Options.Logger wrote to the global logger: %q", global.String())
	}

	var given bytes.Buffer
	l := zerolog.New(&given)
	r, err = Discover(ctxT(t), dir, Options{Logger: l})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if !strings.Contains(given.String(), "notes.txt") {
		t.Errorf("a given logger did not receive the discovery event; got %q", given.String())
	}
}

// TestPluginLogsBridged checks that a plugin's hclog JSON records reach the
// host's zerolog logger as structured events tagged with the plugin's name,
// and that stdout written after the handshake is logged as a warning.
func TestPluginLogsBridged(t *testing.T) {
	var buf testenv.SyncBuffer
	l := zerolog.New(&buf).Level(zerolog.InfoLevel)
	r := open(t, pluginsDir(t, []string{"objective"}, nil), Options{Logger: l})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "objective")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Configure(ctx, map[string]string{"offset": "3", "print": "1"}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`"level":"info","plugin":"objective"`, `"offset":3`, `"message":"configured"`,
		`"level":"warn"`, `"stdout":"stray output"`,
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out := buf.String()
		missing := ""
		for _, w := range want {
			if !strings.Contains(out, w) {
				missing = w
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("log lacks %s:\n%s", missing, out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTailKeepsFatalLine: a crash's first line ("fatal error: ..."), which
// a goroutine dump longer than the tail pushes out of it, is kept apart
// and comes first in the error.
func TestTailKeepsFatalLine(t *testing.T) {
	tl := newTail(40)
	fmt.Fprintf(tl, "loading\nfatal error: runtime: out of memory\n\nruntime stack:\n")
	for i := range 200 {
		fmt.Fprintf(tl, "goroutine %d [running]:\n\tmain.f()\n", i)
	}
	fmt.Fprintf(tl, "panic: a later one\n")
	if got := tl.Fatal(); got != "fatal error: runtime: out of memory" {
		t.Fatalf("Fatal = %q", got)
	}
	if strings.Contains(tl.String(), "out of memory") {
		t.Fatal("test premise: the dump should push the fatal line out of the tail")
	}
	err := &Error{Plugin: "p", Op: "evaluate", Cause: ErrExited, Err: errors.New("the process exited"), Stderr: tl.String(), Fatal: tl.Fatal()}
	if msg := err.Error(); !strings.HasPrefix(msg, `plugin "p": evaluate: fatal error: runtime: out of memory; plugin process exited`) {
		t.Fatalf("message: %.200s", msg)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"2GiB": 2 << 30, "512MiB": 512 << 20, "512M": 512 << 20, "1.5g": 3 << 29,
		"1GB": 1e9, "4096": 4096, " 64 KiB ": 64 << 10,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "2 parsecs", "-1G", "1e30"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) accepted", in)
		}
	}
	if got := FormatSize(512 << 20); got != "512 MiB" {
		t.Errorf("FormatSize = %q", got)
	}
}

// An error passed as an hclog argument is logged as its message, not as the
// JSON of its (unexported) fields, which was "err":{}.
func TestBridgeLogsErrorMessages(t *testing.T) {
	var buf bytes.Buffer
	l := hclogBridge(zerolog.New(&buf), "p")
	l.Warn("call failed", "err", errors.New("connection reset"), "n", 3)
	if out := buf.String(); !strings.Contains(out, `"err":"connection reset"`) || !strings.Contains(out, `"n":3`) {
		t.Fatalf("bridged record %s: want the error's message and the other fields", out)
	}
}

// The log limit holds across a plugin's restarts: a crash-looping plugin
// got a fresh burst per process and flooded the host's log.
func TestLogLimitAcrossRestarts(t *testing.T) {
	var buf testenv.SyncBuffer
	r := open(t, pluginsDir(t, []string{"exitmid"}, nil), Options{Logger: zerolog.New(&buf)})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "exitmid")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	const crashes = 4
	for range crashes {
		if _, err := o.Evaluate(ctx, []float64{14}); !errors.Is(err, ErrExited) {
			t.Fatalf("crash: %v", err)
		}
	}
	r.Close()
	got := strings.Count(buf.String(), "exitmid: spam")
	// Each stream admits logBurst lines, then logRate a second.
	if limit := 2 * (logBurst + int(time.Since(start).Seconds()*logRate) + 1); got > limit || got == 0 {
		t.Fatalf("%d of the %d spammed lines logged, want 1 to %d", got, crashes*300, limit)
	}
}
