package loader

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

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
