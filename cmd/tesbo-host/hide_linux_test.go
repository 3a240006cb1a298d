//go:build linux

package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// checkCmdlineMasked fails t if the command line of process pid, as every
// process on the machine reads it, holds the test password.
func checkCmdlineMasked(t *testing.T, pid int) {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "hunter2") || !strings.Contains(s, "postgres://postgres:xxxxxxx@") {
		t.Errorf("/proc/%d/cmdline: %q", pid, s)
	}
}

// TestHideSecretsNonDumpable: after hideSecrets the process is
// non-dumpable, which keeps processes of the same user (but not root) out
// of its /proc/PID/environ.
func TestHideSecretsNonDumpable(t *testing.T) {
	hideSecrets()
	if d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || d != 0 {
		t.Fatalf("PR_GET_DUMPABLE = %d, %v; want 0", d, err)
	}
}
