package loader

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

// Concurrent Evaluate calls of one script runner each get their own
// interpreter: with one shared interpreter, two goroutines calling an
// Evaluate that waits in a select on time.After and ctx.Done() race inside
// Yaegi's select (v0.16.1; `go test -race` reports it within 200 rounds)
// and, rarely, hang. Without -race this test only checks that the calls
// return; TestScriptPool checks that they never share an interpreter.
func TestScriptConcurrentCalls(t *testing.T) {
	_, src := scriptFile(t, "wait.go", `package wait

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "wait", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	select {
	case <-time.After(2 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return -x[0], nil
}
`)
	s, err := compileSource(src, false)
	if err != nil {
		t.Fatal(err)
	}
	obj := scriptObjective{&scriptPool{src: src, idle: []*Script{s}}}
	for round := range 200 {
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// A deadline, as the host's calls have: ctx.Done() is then a
				// channel the select really waits on.
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if v, err := obj.Evaluate(ctx, []float64{0.5}); err != nil || v != -0.5 {
					t.Errorf("Evaluate = %v, %v; want -0.5", v, err)
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: two concurrent Evaluate calls did not return within 30 s", round)
		}
	}
	if n := len(obj.pool.idle); n < 1 || n > 2 {
		t.Fatalf("%d interpreters after calls two at a time, want 1 or 2", n)
	}
}

// The pool hands calls in flight at the same time distinct interpreters,
// and reuses an idle one rather than compiling again. Every copy runs the
// script as the runner read it: an edit on disk after that changes none.
func TestScriptPool(t *testing.T) {
	p, src := scriptFile(t, "f.go", `package f

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Name: "f", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(ctx context.Context, x []float64) (float64, error) { return x[0], nil }
`)
	first, err := compileSource(src, false)
	if err != nil {
		t.Fatal(err)
	}
	pool := &scriptPool{src: src, idle: []*Script{first}}
	edited, _ := os.ReadFile(p)
	if err := os.WriteFile(p, bytes.Replace(edited, []byte("return x[0], nil"), []byte("return 2 * x[0], nil"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	a, errA := pool.get()
	b, errB := pool.get()
	if errA != nil || errB != nil || a == b || a != first {
		t.Fatalf("two calls in flight got %p and %p (errors %v, %v), want the first copy %p and a second one", a, b, errA, errB, first)
	}
	if v, err := b.Evaluate(context.Background(), []float64{0.25}); err != nil || v != 0.25 {
		t.Fatalf("the second copy, compiled after the script was edited, gives %v (%v); want the script as read, 0.25", v, err)
	}
	pool.put(a)
	pool.put(b)
	if c, err := pool.get(); err != nil || (c != a && c != b) || len(pool.idle) != 1 {
		t.Fatalf("after both returned, get gave %p (%v) with %d idle: want one of the two copies and the other idle", c, err, len(pool.idle))
	}
}

// A script Yaegi panics on (a constant called as a function) fails to
// compile with one line naming the position, not a stack trace.
func TestCompileInterpreterPanic(t *testing.T) {
	_, src := scriptFile(t, "bad.go", `package scripts

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "bad", Params: []sdk.Param{sdk.Float("x", 0, 1)}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) { return x[0], nil }
`)
	_, err := compileSource(src, false)
	if err == nil || !strings.Contains(err.Error(), "compile: the interpreter failed on the script (src/tesboscript/bad.go:10:") ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("err = %v, want one line naming bad.go:10", err)
	}
}

// scriptFile writes a script of text under name in a new directory and
// reads it back: its path and source.
func scriptFile(t *testing.T, name, text string) (string, *scriptSource) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := readScript(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, src
}
