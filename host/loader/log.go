package loader

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/safetext"
)

// hclogBridge returns an hclog.Logger for go-plugin that forwards every
// record (go-plugin's own, and the hclog JSON lines a plugin writes to its
// stderr, which go-plugin parses) to l as structured zerolog events tagged
// plugin=name.
func hclogBridge(l zerolog.Logger, name string) hclog.Logger {
	il := hclog.NewInterceptLogger(&hclog.LoggerOptions{
		Name:   "plugin",
		Level:  hclog.Trace, // zerolog filters
		Output: io.Discard,
	})
	sink := &zerologSink{l: l.With().Str("plugin", name).Logger()}
	sink.limit = newLogLimiter(func(n int) {
		sink.l.Warn().Int("suppressed", n).Msg(suppressedLine(n))
	})
	il.RegisterSink(sink)
	return il
}

// zerologSink re-logs hclog records, at most logRate a second (logBurst
// at once) per plugin (over all its processes), each string cut to maxLogLine bytes and
// control characters in the message and keys escaped.
type zerologSink struct {
	l     zerolog.Logger
	limit *logLimiter
}

func (s *zerologSink) Accept(name string, level hclog.Level, msg string, args ...any) {
	// go-plugin's own chatter (loggers "plugin" and "plugin.stdio") is
	// demoted: the loader reports what matters (exits, timeouts) as errors.
	if (name == "plugin" || name == "plugin.stdio") && (level < hclog.Warn || msg == "plugin process exited") {
		level = hclog.Trace
	}
	// A plain line on the plugin's own stderr (not hclog's JSON, no
	// "[LEVEL]" prefix: a script's print before it serves, the log package
	// of a plugin that set its own writer) comes at debug level from
	// go-plugin's logger named after the binary; the plugin's author
	// meant it to be seen.
	if strings.HasPrefix(name, "plugin.") && name != "plugin.stdio" && level == hclog.Debug && !strings.HasPrefix(msg, "[DEBUG]") {
		level = hclog.Info
	}
	var ev *zerolog.Event
	switch level {
	case hclog.Trace:
		ev = s.l.Trace()
	case hclog.Debug:
		ev = s.l.Debug()
	case hclog.Info:
		ev = s.l.Info()
	case hclog.Warn:
		ev = s.l.Warn()
	case hclog.Error:
		ev = s.l.Error()
	default:
		ev = s.l.Debug()
	}
	if ev == nil { // level disabled
		return
	}
	// Only records the log shows count against the rate: a flood of
	// debug lines must not suppress a warning.
	if s.limit != nil && !s.limit.admit() {
		return
	}
	ev = ev.Str("logger", name)
	for i := 0; i+1 < len(args); i += 2 {
		k := safetext.Terminal(safetext.Cap(fmt.Sprint(args[i]), 256))
		switch k {
		case "timestamp": // go-plugin's copy of the plugin's clock
			continue
		case "plugin": // go-plugin's path of the binary; ours is the name
			k = "path"
		}
		if err, ok := args[i+1].(error); ok {
			// Most error types have no exported fields and would
			// marshal as {}: log the message.
			ev = ev.Str(k, safetext.Cap(err.Error(), maxLogLine))
			continue
		}
		if str, ok := args[i+1].(string); ok {
			ev = ev.Str(k, safetext.Cap(str, maxLogLine))
			continue
		}
		ev = ev.Interface(k, args[i+1])
	}
	// A console log prints the message and keys as they are (values it
	// quotes): escape them, they are the plugin's text.
	ev.Msg(safetext.Terminal(safetext.Cap(msg, maxLogLine)))
}

// procLogs re-logs what the processes of one plugin write: the limits
// hold across its restarts, or a crash-looping plugin would get a fresh
// logBurst per process (52,000 lines in 23 s in a fault run, where the
// rate allows about 1,350).
type procLogs struct {
	hclog          hclog.Logger // go-plugin's records of the processes
	stdout, stderr *logLimiter  // their stdout and stderr lines
}

func newProcLogs(l zerolog.Logger, name string) procLogs {
	summary := func(stream string) func(int) {
		return func(n int) {
			l.Warn().Str("plugin", name).Str("stream", stream).Int("suppressed", n).Msg(suppressedLine(n))
		}
	}
	return procLogs{hclog: hclogBridge(l, name), stdout: newLogLimiter(summary("stdout")), stderr: newLogLimiter(summary("stderr"))}
}

// lineLogger is an io.Writer that logs each complete line it receives; it
// carries what a plugin writes to its (redirected) stdout and stderr after
// the handshake. Lines are cut to maxLogLine bytes and passed on at most
// logRate a second (logBurst at once); the rest are counted and reported
// in a summary line.
type lineLogger struct {
	mu    sync.Mutex
	buf   []byte
	emit  func(line string)
	limit *logLimiter
}

func (w *lineLogger) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.limit == nil {
		w.limit = newLogLimiter(func(n int) { w.emit(suppressedLine(n)) })
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(w.buf[:i]), "\r")
		w.buf = w.buf[i+1:]
		if line != "" {
			w.log(line)
		}
	}
	if len(w.buf) > 64<<10 { // a very long line without newline
		w.log(string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// log passes one line on, cut to maxLogLine bytes, unless over the rate;
// a line saying why the process dies ("panic: ...") always passes, since
// the emit function of stderr also keeps the tail that explains a crash.
func (w *lineLogger) log(line string) {
	if isFatalLine(line) || w.limit.admit() {
		w.emit(safetext.Cap(line, maxLogLine))
	}
}

// tail keeps the last lines written to it (a plugin's raw stderr), to
// explain crashes in error messages, and the first line saying why a
// process died ("fatal error: runtime: out of memory", "panic: ..."),
// which a goroutine dump longer than the tail would push out.
type tail struct {
	mu    sync.Mutex
	lines []string
	part  []byte
	max   int
	fatal string
}

func newTail(max int) *tail { return &tail{max: max} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.addLocked(string(t.part[:i]))
		t.part = t.part[i+1:]
	}
	if len(t.part) > 4096 {
		t.addLocked(string(t.part))
		t.part = t.part[:0]
	}
	return len(p), nil
}

// add records one line; it is called from Write and for the lines a
// plugin writes to its redirected stderr after the handshake.
func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addLocked(line)
}

func (t *tail) addLocked(line string) {
	line = strings.TrimRight(line, "\r")
	if strings.HasPrefix(line, `{"@`) { // an hclog JSON record: already logged
		return
	}
	if len(line) > 2000 {
		line = line[:2000] + "…"
	}
	if t.fatal == "" && isFatalLine(line) {
		t.fatal = line
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// fatalRE matches the lines with which a dying process says why: the Go
// runtime's fatal errors, panics, failed thread creation (what running out
// of memory looks like when the allocation that fails is a new thread's
// stack) and fatal signals; Python's MemoryError.
var fatalRE = regexp.MustCompile(`^(fatal error:|panic:|runtime/cgo:|SIG[A-Z]+: |MemoryError)`)

func isFatalLine(line string) bool { return fatalRE.MatchString(line) }

// Fatal returns the first line that said why the process died, or "".
func (t *tail) Fatal() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fatal
}

// String returns the kept lines, most recent last.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.part) > 0 {
		lines = append(append([]string(nil), lines...), string(t.part))
	}
	return strings.Join(lines, "\n")
}
