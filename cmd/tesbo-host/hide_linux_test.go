//go:build linux

package main

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tesbo/tesbo/store"
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

// TestHostEnvironClosed: a process of the host's user (what a plugin is)
// cannot read the running host's environment through /proc/PID/environ,
// while it can read that of an ordinary process of the same user started
// with the same environment. As root, both run as nobody (root reads
// everything).
func TestHostEnvironClosed(t *testing.T) {
	dir, err := os.MkdirTemp("", "tesbo-environ-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o777)
	bin := filepath.Join(dir, "tesbo-host")
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "s.db")
	d, err := store.Open(db, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	os.Chmod(db, 0o666)
	attr := &syscall.SysProcAttr{}
	if os.Geteuid() == 0 {
		attr.Credential = &syscall.Credential{Uid: 65534, Gid: 65534} // nobody
	}
	env := append(os.Environ(), "TESBO_TEST_SECRET=hunter2")
	start := func(name string, args ...string) *exec.Cmd {
		c := exec.Command(name, args...)
		c.Env, c.SysProcAttr, c.Dir = env, attr, dir
		return c
	}
	host := start(bin, "serve", "--db", db, "--addr", "127.0.0.1:0")
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { host.Process.Kill(); host.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("serve did not start: %v", err)
	}
	go io.Copy(io.Discard, out)
	other := start("sleep", "60")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	read := func(pid int) string {
		b, _ := start("cat", "/proc/"+strconv.Itoa(pid)+"/environ").CombinedOutput()
		return string(b)
	}
	// Read until the process has its environment: right after Start the
	// kernel may still be setting up the new image (an empty read), which
	// a loaded machine shows.
	got := read(other.Process.Pid)
	for i := 0; i < 50 && !strings.Contains(got, "hunter2"); i++ {
		time.Sleep(20 * time.Millisecond)
		got = read(other.Process.Pid)
	}
	if !strings.Contains(got, "hunter2") {
		t.Fatalf("test premise: a process of the same user reads another's environment; got %q", got)
	}
	if got := read(host.Process.Pid); strings.Contains(got, "hunter2") {
		t.Fatal("a process of the host's user read the host's environment")
	}
}
