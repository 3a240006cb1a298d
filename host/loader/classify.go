package loader

// How the loader names a failed start or call: go-plugin's and gRPC's
// errors turned into a cause (the Err... values) and a message that says
// what to do.

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tesbo/tesbo/internal/pause"
	"github.com/tesbo/tesbo/internal/pluginwire"
)

// errNoHandshake: the process did not complete the go-plugin handshake
// within the start timeout.
var errNoHandshake = errors.New("no handshake within the start timeout (the process hangs before serving)")

var unrecognizedRE = regexp.MustCompile(`Unrecognized remote plugin message: ([^\n]*)`)

// classifyStart turns go-plugin's start errors into a cause and a message
// that says what to do.
func classifyStart(err error, cmd *exec.Cmd) (error, error) {
	msg := err.Error()
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		return ErrChecksum, fmt.Errorf("the SHA-256 of %s differs from the pinned checksum; refusing to run it", cmd.Path)
	case strings.Contains(msg, "error verifying checksum"):
		return ErrChecksum, err
	case unrecognizedRE.MatchString(msg):
		line := unrecognizedRE.FindStringSubmatch(msg)[1]
		if strings.TrimSpace(line) == "" {
			if cmd.ProcessState != nil {
				return ErrStart, fmt.Errorf("the process exited before the handshake%s", exitStatus(cmd))
			}
			return ErrHandshake, errors.New("the process closed its stdout without the go-plugin handshake line; is it a tesbo plugin (its main must call sdk.ServeObjective or a sibling)?")
		}
		return ErrHandshake, fmt.Errorf("the process wrote %q on stdout instead of the go-plugin handshake line; a plugin must not print to stdout before serving (log to stderr, e.g. with sdk.Logger)", line)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return ErrStart, errNoHandshake
	case strings.Contains(msg, "plugin exited before we could connect"):
		return ErrStart, fmt.Errorf("the process exited before the handshake%s", exitStatus(cmd))
	case strings.Contains(msg, "incompatible API version"):
		return ErrHandshake, fmt.Errorf("%v (this host speaks tesbo plugin protocol %d; rebuild the plugin against this sdk)", err, pluginwire.ProtocolVersion)
	}
	return ErrStart, err
}

func exitStatus(cmd *exec.Cmd) string {
	if cmd.ProcessState != nil {
		return " (" + cmd.ProcessState.String() + ")"
	}
	return ""
}

func (p *proc) classify(ctx, cctx context.Context, s *session, op string, timeout time.Duration, started time.Time, err error) error {
	name := p.u.name
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	st, _ := status.FromError(err)
	code := st.Code()
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded) || lateDeadline(code) && deadlinePassed(cctx):
		// Our deadline, not one the plugin reports. The plugin's gRPC server
		// enforces the same deadline: it resets the stream (Canceled) when it
		// fires, or the plugin's handler sees its context expire and the sdk
		// answers DeadlineExceeded. On a loaded machine either can arrive
		// before our own context's timer has run, so a passed deadline
		// counts too.
		if ctx.Err() == nil && pause.Explains(started, timeout) {
			// This process was stopped (Ctrl-Z, SIGSTOP) or its machine
			// suspended: the plugin did nothing wrong and is left running.
			return &Error{Plugin: name, Op: op, Cause: ErrPaused,
				Err: fmt.Errorf("the %s limit passed while this process was paused (%v of the call); the call can be re-run", timeout, pause.Since(started).Round(time.Millisecond))}
		}
		p.kill(s, stopTimeout)
		limit := "the caller's deadline"
		if timeout > 0 && ctx.Err() == nil {
			limit = timeout.String()
		}
		return &Error{Plugin: name, Op: op, Cause: ErrTimeout,
			Err: fmt.Errorf("no answer within %s; the process was killed and will be restarted on the next call", limit)}
	case ctx.Err() != nil:
		return &Error{Plugin: name, Op: op, Cause: ctx.Err(), Err: err}
	case code == codes.Internal && strings.Contains(st.Message(), "panicked"):
		return &Error{Plugin: name, Op: op, Cause: ErrPanic, Err: errors.New(st.Message())}
	case code == codes.ResourceExhausted && strings.Contains(st.Message(), "larger than max") &&
		strings.HasSuffix(st.Message(), fmt.Sprintf(" vs. %d)", MaxPluginMessage)):
		// Our receive limit (boundedConn), not one the plugin reports.
		return &Error{Plugin: name, Op: op, Cause: ErrBadOutput,
			Err: fmt.Errorf("the answer is larger than the %s a plugin message may hold (loader.MaxPluginMessage): %s", FormatSize(MaxPluginMessage), st.Message())}
	}
	if code == codes.Unavailable || code == codes.Canceled || code == codes.Unknown && s.client.Exited() {
		switch s.stopped.Load() {
		case stopTimeout:
			return &Error{Plugin: name, Op: op, Cause: ErrNeighbourFault,
				Err: errors.New("another call into the same process timed out and the process was killed with this call running; this call did nothing wrong and can be re-run (the process restarts on the next call)")}
		case stopClose:
			return &Error{Plugin: name, Op: op, Cause: ErrExited, Err: errors.New("the process was stopped during the call: the plugin registry closed")}
		}
		if p.waitExit(s, exitWait) {
			s.dead.Store(true)
			s.exitOnce.Do(func() { s.crowded.Store(s.inflight.Load() > 1) })
			return &Error{Plugin: name, Op: op, Cause: ErrExited,
				Err:    fmt.Errorf("the process exited during the call%s%s; it will be restarted on the next call", exitStatus(s.cmd), p.memoryNote()),
				Stderr: s.stderr.String(), Fatal: s.stderr.Fatal()}
		}
	}
	return &Error{Plugin: name, Op: op, Cause: ErrRemote, Err: errors.New(st.Message())}
}

// memoryNote says, for a crash, that the process ran under a memory limit:
// whatever allocation failed first (the heap, a thread's stack) the crash
// then likely means it ran out of memory.
func (p *proc) memoryNote() string {
	lim := p.u.r.opts.MemoryLimit
	if lim <= 0 {
		return ""
	}
	return fmt.Sprintf(" under a memory limit of %s (--plugin-memory): a failed allocation there means the plugin ran out of memory", FormatSize(lim))
}

// lateDeadline reports whether a status code is what the plugin's side
// answers when the call's deadline fires there first.
func lateDeadline(code codes.Code) bool {
	return code == codes.Canceled || code == codes.DeadlineExceeded
}

// deadlinePassed reports whether ctx's deadline is past, or within 20 ms,
// by the clock rather than by ctx.Err(): the context's timer can run late
// on a loaded machine while the plugin's server, which enforces the same
// deadline, has already given up. Rounding plays no part: grpc-go rounds
// the grpc-timeout header up and the server counts from the request's
// arrival, so its deadline is never earlier than ours. The margin is slack
// for timer lateness, so that an answer racing the deadline is still
// counted as the deadline firing rather than as a plugin error.
func deadlinePassed(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ok && time.Until(d) <= 20*time.Millisecond
}
