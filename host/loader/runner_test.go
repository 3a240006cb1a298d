package loader

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// A program that never called RunScriptRunnerIfRequested does not
// re-execute itself for a script (its main would run again): the script
// fails to start with an error naming the call. TestMain made the call, so
// the flag is cleared for the test and restored after it.
func TestScriptNeedsRunnerCall(t *testing.T) {
	runnerReady.Store(false)
	defer runnerReady.Store(true)
	u := &unit{r: &Registry{}, name: "s", path: "s.go", source: SourceScript, kind: KindObjective}
	_, err := u.command(context.Background())
	if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), "RunScriptRunnerIfRequested") {
		t.Fatalf("error %v, want ErrStart naming RunScriptRunnerIfRequested", err)
	}
	runnerReady.Store(true)
	if cmd, err := u.command(context.Background()); err != nil || cmd == nil {
		t.Fatalf("after the call: %v", err)
	}
}
