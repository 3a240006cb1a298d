package loader

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	zlog "github.com/rs/zerolog/log"
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
	r, err = Discover(ctxT(t), dir, Options{Logger: &l})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if !strings.Contains(given.String(), "notes.txt") {
		t.Errorf("a given logger did not receive the discovery event; got %q", given.String())
	}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPluginLogsBridged checks that a plugin's hclog JSON records reach the
// host's zerolog logger as structured events tagged with the plugin's name,
// and that stdout written after the handshake is logged as a warning.
func TestPluginLogsBridged(t *testing.T) {
	var buf syncBuf
	l := zerolog.New(&buf).Level(zerolog.InfoLevel)
	r := open(t, pluginsDir(t, []string{"objective"}, nil), Options{Logger: &l})
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
