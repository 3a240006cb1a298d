package loader

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/testenv"
)

// collector gathers emitted lines.
type collector struct {
	mu    sync.Mutex
	lines []string
}

func (c *collector) emit(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lines = append(c.lines, line)
}

func (c *collector) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

// TestLineLoggerRateLimited: a plugin printing 100,000 lines at once gets
// logBurst of them logged, then one summary with the count of the others
// when it next prints after the bucket refilled; a 1 MiB line is cut.
func TestLineLoggerRateLimited(t *testing.T) {
	var c collector
	w := &lineLogger{emit: c.emit}
	now := time.Unix(1000, 0)
	w.limit = newLogLimiter(func(n int) { c.emit(suppressedLine(n)) })
	w.limit.now = func() time.Time { return now }
	w.limit.after = time.Hour // only the fake clock's refill summarizes here
	for i := range 100000 {
		fmt.Fprintf(w, "line %d\n", i)
	}
	if got := c.get(); len(got) != logBurst || got[logBurst-1] != fmt.Sprintf("line %d", logBurst-1) {
		t.Fatalf("%d lines logged at once, want the first %d", len(got), logBurst)
	}
	now = now.Add(time.Second)
	fmt.Fprintf(w, "after\n")
	got := c.get()[logBurst:]
	if len(got) != 2 || got[0] != suppressedLine(100000-logBurst) || got[1] != "after" {
		t.Fatalf("after a second: %q", got)
	}
	for range 1000 {
		fmt.Fprintf(w, "more\n")
	}
	fmt.Fprintf(w, "panic: the end\n")
	if got := c.get(); got[len(got)-1] != "panic: the end" {
		t.Fatalf("a fatal line over the rate was dropped: last %q", got[len(got)-1])
	}
	now = now.Add(time.Minute)
	fmt.Fprintf(w, "%s\n", strings.Repeat("y", 1<<20))
	got = c.get()
	long := got[len(got)-1]
	if len(long) > maxLogLine || !strings.HasSuffix(long, " bytes cut)") {
		t.Fatalf("a 1 MiB line was logged as %d bytes", len(long))
	}
}

// TestLogSummaryWithoutMoreOutput: lines dropped at the end of a burst are
// summarized logSummaryAfter later, although the plugin prints nothing
// more.
func TestLogSummaryWithoutMoreOutput(t *testing.T) {
	var c collector
	w := &lineLogger{emit: c.emit}
	for range logBurst + 100 {
		fmt.Fprintf(w, "x\n")
	}
	deadline := time.Now().Add(5 * logSummaryAfter)
	for {
		got := c.get()
		if last := got[len(got)-1]; strings.Contains(last, "lines suppressed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no summary after %v: %d lines logged", 5*logSummaryAfter, len(got))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestBridgeRateLimited: a plugin's hclog records are limited the same
// way, with a summary record, and their strings are cut.
func TestBridgeRateLimited(t *testing.T) {
	var buf testenv.SyncBuffer
	l := hclogBridge(zerolog.New(&buf), "p")
	start := time.Now()
	for i := range 10000 {
		l.Info("record", "i", i, "big", strings.Repeat("z", 2*maxLogLine))
	}
	deadline := time.Now().Add(5 * logSummaryAfter)
	for !strings.Contains(buf.String(), `"suppressed":`) {
		if time.Now().After(deadline) {
			t.Fatal("no summary record")
		}
		time.Sleep(20 * time.Millisecond)
	}
	out := buf.String()
	if n, limit := strings.Count(out, `"message":"record"`), logBurst+int(logRate*time.Since(start).Seconds())+1; n > limit {
		t.Fatalf("%d of 10000 records logged, at most %d allowed", n, limit)
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > maxLogLine+300 {
			t.Fatalf("a record of %d bytes was logged", len(line))
		}
	}
}

// TestBridgeEscapesMessages: a record's message and keys, which a console
// log prints as they are, reach the log with control characters escaped.
func TestBridgeEscapesMessages(t *testing.T) {
	var buf testenv.SyncBuffer
	l := hclogBridge(zerolog.New(zerolog.ConsoleWriter{Out: &buf, NoColor: true}), "p")
	l.Warn("clear\x1b[2J screen", "k\x1b[31m", "v")
	out := buf.String()
	if strings.Contains(out, "\x1b") || !strings.Contains(out, `clear\x1b[2J screen`) || !strings.Contains(out, `k\x1b[31m`) {
		t.Fatalf("console log %q", out)
	}
}

// TestBridgeLimitCountsShownRecords: records below the log's level do not
// count against the rate, so a flood of debug lines leaves a warning
// logged (and no summary of lines nobody would have seen).
func TestBridgeLimitCountsShownRecords(t *testing.T) {
	var buf testenv.SyncBuffer
	l := hclogBridge(zerolog.New(&buf).Level(zerolog.WarnLevel), "p")
	for range 10 * logBurst {
		l.Debug("chatter")
	}
	l.Warn("disk full")
	if out := buf.String(); !strings.Contains(out, "disk full") || strings.Contains(out, "suppressed") {
		t.Fatalf("log %q", out)
	}
}
