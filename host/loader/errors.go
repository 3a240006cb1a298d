package loader

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tesbo/tesbo/sdk"
)

// Causes of plugin failures, matched with errors.Is on the *Error the
// loader returns.
var (
	ErrNotFound  = errors.New("no such plugin")
	ErrDuplicate = errors.New("name used twice")
	ErrWrongKind = errors.New("plugin is of another kind")
	ErrStart     = errors.New("plugin failed to start")
	ErrHandshake = errors.New("plugin broke the go-plugin handshake")
	ErrExited    = errors.New("plugin process exited")
	// ErrNeighbourFault: the call did nothing wrong, but another call into
	// the same plugin process timed out and the process was killed with
	// this call running. Re-running it is safe; see Error.NeighbourFault.
	ErrNeighbourFault = errors.New("plugin process was killed because of another call")
	ErrTimeout        = errors.New("plugin call timed out")
	// ErrPaused: the call's limit passed while the host process itself
	// was paused (SIGSTOP, Ctrl-Z, a suspended machine), not because the
	// plugin was slow. Re-running it is safe; see Error.NeighbourFault.
	ErrPaused     = errors.New("host paused during the plugin call")
	ErrPanic      = errors.New("plugin panicked")
	ErrRemote     = errors.New("plugin returned an error")
	ErrBadValue   = errors.New("plugin returned a non-finite value")
	ErrBadOutput  = errors.New("plugin returned a malformed result")
	ErrBadInput   = errors.New("invalid input for plugin")
	ErrBadSpace   = sdk.ErrBadSpace
	ErrChecksum   = errors.New("plugin checksum mismatch")
	ErrBuild      = errors.New("building Go plugin failed")
	ErrNoGo       = errors.New("go toolchain not found")
	ErrRestricted = errors.New("script imports a package scripts may not use")
	ErrScript     = errors.New("invalid script")
	ErrClosed     = errors.New("plugin registry closed")
	// ErrChanged: a plugin process restarted mid-run describes its
	// objective differently from the one the run began with (a rebuilt
	// binary, an edited script). See Error.StopsRun.
	ErrChanged = errors.New("plugin changed while in use")
)

// Error is every error the loader returns about a plugin: which plugin,
// which operation, the cause (one of the Err... values above) and details.
type Error struct {
	Plugin string // plugin name as discovered (e.g. "synthetic", "myscript")
	Op     string // discover, build, start, describe, info, configure, evaluate, suggest, score
	Cause  error  // one of the Err... values
	Err    error  // what happened, in detail; may be nil
	Stderr string // last lines the plugin wrote to stderr, when they explain a crash
	Fatal  string // the first "fatal error:" or "panic:" line of that stderr: why it crashed
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plugin %q: %s: ", e.Plugin, e.Op)
	if e.Fatal != "" {
		// First: the goroutine dump after it can be longer than the stderr
		// tail, and a reader (or a truncated stored error) wants the cause.
		fmt.Fprintf(&b, "%s; ", e.Fatal)
	}
	switch {
	case e.Err == nil:
		fmt.Fprintf(&b, "%v", e.Cause)
	case errors.Is(e.Err, e.Cause): // the detail already says it
		fmt.Fprintf(&b, "%v", e.Err)
	default:
		fmt.Fprintf(&b, "%v: %v", e.Cause, e.Err)
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		fmt.Fprintf(&b, "\nlast plugin stderr:\n%s", indent(s))
	}
	return b.String()
}

// NeighbourFault reports whether the call failed only because another call
// took the shared plugin process down (cause ErrNeighbourFault), or because
// the host was paused past its limit (ErrPaused), so that it
// can be re-run without counting as a failed attempt: it implements
// host.NeighbourFaulter, which package host's evaluation loop matches on
// any objective error, so that it need not import the loader (and other
// objectives can use it too).
func (e *Error) NeighbourFault() bool {
	return errors.Is(e.Cause, ErrNeighbourFault) || errors.Is(e.Cause, ErrPaused)
}

// StopsRun reports whether the call failed because the plugin is no
// longer the one the run began with (cause ErrChanged, or ErrChecksum when
// a restarted process fails its pinned checksum): no evaluation can go on,
// so the run stops with the trial left for resume, which checks the
// objective against the study. It implements host.RunStopper.
func (e *Error) StopsRun() bool {
	return errors.Is(e.Cause, ErrChanged) || errors.Is(e.Cause, ErrChecksum)
}

// Unwrap lets errors.Is match both the cause and the detail.
func (e *Error) Unwrap() []error {
	out := []error{e.Cause}
	if e.Err != nil {
		out = append(out, e.Err)
	}
	return out
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n")
}
