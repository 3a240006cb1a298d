package loader

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestContainWrapperChildHoldsStdout: a plugin that leaves a child holding
// its stdout (a wrapper script's `echo ...; sleep 30`, or `sleep 30 &;
// exit 3`) is reported as broken at once, and the child dies with it: the
// loader kills the plugin's whole process group instead of waiting for the
// child to close the pipe.
func TestContainWrapperChildHoldsStdout(t *testing.T) {
	for _, tc := range []struct {
		name, last string // the script's last line
		cause      error
		want       string
	}{
		{"junk line", "echo not a plugin\nwait", ErrHandshake, `"not a plugin"`},
		{"exits", "echo cannot start >&2\nexit 3", ErrStart, "exit status 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pidFile := filepath.Join(t.TempDir(), "sleep.pid")
			script := "#!/bin/sh\nsleep 30 &\necho $! > " + pidFile + "\n" + tc.last + "\n"
			if err := os.WriteFile(filepath.Join(dir, "wrapper"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			r := open(t, dir, Options{})
			start := time.Now()
			_, err := r.Objective(ctxT(t), "wrapper")
			wantErr(t, err, "wrapper", tc.cause, tc.want)
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("reporting the broken plugin took %v, want a couple of seconds at most", d)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(2 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Fatalf("the wrapper's child %d survived the plugin", pid)
				}
			}
		})
	}
}

// TestContainMemoryLimit: under Options.MemoryLimit a script that allocates
// without bound dies alone with Go's fatal "out of memory", which the error puts
// first (before the goroutine dump's tail); the host carries on and the
// restarted process answers.
func TestContainMemoryLimit(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{"hog.go": "testdata/scripts/hog.go"})
	r := open(t, dir, Options{MemoryLimit: 512 << 20, EvalTimeout: generous})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "hog")
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Evaluate(ctx, []float64{0.9})
	// Which allocation fails first varies: the heap's ("fatal error: out of
	// memory ...") or a new thread's stack ("runtime/cgo: pthread_create
	// failed"); the error names the limit either way.
	wantErr(t, err, "hog", ErrExited, "out of memory", "512 MiB")
	var le *Error
	errors.As(err, &le)
	if le.Fatal == "" || !strings.HasPrefix(err.Error(), `plugin "hog": evaluate: `+le.Fatal) {
		t.Fatalf("the fatal line %q is not first: %s", le.Fatal, err)
	}
	if v, err := o.Evaluate(ctx, []float64{0.25}); err != nil || v != 0.25 {
		t.Fatalf("after restart: %v, %v", v, err)
	}
}
