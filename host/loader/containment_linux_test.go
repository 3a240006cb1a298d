package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestContainWrapperChildHoldsStdout: a plugin that prints junk and leaves a
// child holding its stdout (a wrapper script's `echo ...; sleep 30`) is
// reported as broken at once, and the child dies with it: the loader kills
// the plugin's whole process group instead of waiting for the child to
// close the pipe.
func TestContainWrapperChildHoldsStdout(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	script := "#!/bin/sh\nsleep 30 &\necho $! > " + pidFile + "\necho not a plugin\nwait\n"
	if err := os.WriteFile(filepath.Join(dir, "wrapper"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir, Options{})
	start := time.Now()
	_, err := r.Objective(ctxT(t), "wrapper")
	wantErr(t, err, "wrapper", ErrHandshake, `"not a plugin"`)
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
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if !processAlive(pid) {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the wrapper's child %d survived the plugin", pid)
		}
	}
}

// processAlive reports whether pid is a running (not zombie) process.
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z")
}
