package loader

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// lateTimer is a context whose deadline has passed but whose timer has not
// run yet (Err is still nil), as happens on a loaded machine.
type lateTimer struct{ context.Context }

func (lateTimer) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestClassifyLateDeadline: the plugin's server enforces the call's
// deadline too; when it fires there first the host gets a stream reset
// (Canceled) or, from a handler that honours its context, DeadlineExceeded.
// If that beats our context's timer, the call still counts as timed out,
// not as a plugin error. Long before the deadline the same codes are the
// plugin's own answer.
func TestClassifyLateDeadline(t *testing.T) {
	reset := status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL")
	expired := status.Error(codes.DeadlineExceeded, "evaluate: context deadline exceeded")
	early := func(t *testing.T) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		t.Cleanup(cancel)
		return ctx
	}
	late := func(*testing.T) context.Context { return lateTimer{context.Background()} }
	cases := []struct {
		name    string
		err     error
		cctx    func(*testing.T) context.Context
		stopped int32 // why we killed the session (stopNone: we did not)
		want    error // cause
	}{
		{"reset after the deadline", reset, late, stopNone, ErrTimeout},
		{"DeadlineExceeded after the deadline", expired, late, stopNone, ErrTimeout},
		{"reset before the deadline, another call timed out", reset, early, stopTimeout, ErrNeighbourFault},
		{"reset before the deadline, registry closed", reset, early, stopClose, ErrExited},
		{"reset before the deadline, process alive", reset, early, stopNone, ErrRemote},
		{"DeadlineExceeded before the deadline", expired, early, stopNone, ErrRemote},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newProc(&unit{name: "hang", r: &Registry{}})
			s := &session{client: &plugin.Client{}, cmd: &exec.Cmd{}, stderr: newTail(10)}
			if c.stopped != stopNone {
				s.markStopped(c.stopped)
			}
			start := time.Now()
			err := p.classify(context.Background(), c.cctx(t), s, "evaluate", 300*time.Millisecond, time.Now(), c.err)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want cause %v", err, c.want)
			}
			if c.want == ErrTimeout && !s.dead.Load() {
				t.Error("timed-out session not marked dead")
			}
			// A process that never started has nothing to wait for.
			if d := time.Since(start); d > time.Second {
				t.Errorf("classify took %v", d)
			}
		})
	}
}

// TestWaitExitReturnsWhenReaped: waitExit's bound is long (a loaded
// machine may reap a crashed plugin late) but it returns as soon as the
// process is gone.
func TestWaitExitReturnsWhenReaped(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"objective"}, nil), Options{})
	ctx := ctxT(t)
	if _, err := r.Objective(ctx, "objective"); err != nil {
		t.Fatal(err)
	}
	p := r.unitNamed("objective").proc
	s, err := p.get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.client.Exited() {
		t.Fatal("plugin exited before the test killed it")
	}
	start := time.Now()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !p.waitExit(s, exitWait) {
		t.Fatalf("waitExit: process not reaped within %v", exitWait)
	}
	if d := time.Since(start); d > exitWait/2 {
		t.Fatalf("waitExit took %v after the kill", d)
	}
	if s.cmd.ProcessState == nil || s.cmd.ProcessState.Success() {
		t.Fatalf("exit state %v, want killed", s.cmd.ProcessState)
	}
}
