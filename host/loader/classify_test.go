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

// TestClassifyResetAfterDeadline: the plugin's server enforces the call's
// deadline too and resets the stream when it fires; if that reset beats our
// context's timer, the call still counts as timed out, not as a plugin
// error.
func TestClassifyResetAfterDeadline(t *testing.T) {
	p := newProc(&unit{name: "hang"})
	s := &session{client: &plugin.Client{}, cmd: &exec.Cmd{}, stderr: newTail(10)}
	reset := status.Error(codes.Canceled, "stream terminated by RST_STREAM with error code: CANCEL")
	err := p.classify(context.Background(), lateTimer{context.Background()}, s, "evaluate", 300*time.Millisecond, reset)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("reset after the deadline: got %v, want cause %v", err, ErrTimeout)
	}
	if !s.dead.Load() {
		t.Error("timed-out session not marked dead")
	}
	// Long before the deadline, a reset is not a timeout.
	early, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	s = &session{client: &plugin.Client{}, cmd: &exec.Cmd{}, stderr: newTail(10)}
	s.dead.Store(true) // as if Close stopped it
	err = p.classify(context.Background(), early, s, "evaluate", time.Hour, reset)
	if errors.Is(err, ErrTimeout) || !errors.Is(err, ErrExited) {
		t.Fatalf("reset before the deadline of a stopped session: got %v, want cause %v", err, ErrExited)
	}
}
