package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// readOnlyCmd returns a command running the binary with args while dir
// is read-only to it. Root ignores file modes, so as root the command runs
// in its own user and mount namespaces (unshare -rm) with dir bind-mounted
// read-only over itself: writes then fail with EROFS as on a read-only
// mount. Otherwise dir is made 0555 until the test ends.
func readOnlyCmd(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(dir, 0o755) })
		return exec.Command(binPath, args...)
	}
	if out, err := exec.Command("unshare", "-rm", "true").CombinedOutput(); err != nil {
		testenv.Need(t, "running as root, and 'unshare -rm' (user and mount namespaces) is not permitted, so a read-only directory cannot be simulated: "+strings.TrimSpace(string(out)))
	}
	script := `mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"`
	return exec.Command("unshare", append([]string{"-rm", "sh", "-c", script, "sh", dir, binPath}, args...)...)
}

// fileSum is the SHA-256 of a file's bytes.
func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// 'trials' and 'serve' read a study database in a directory they cannot
// write (a read-only mount, a shared results directory): they only read,
// so they open it read-only instead of failing with "attempt to write a
// readonly database", and leave the file as it was.
func TestReadOnlyDirectory(t *testing.T) {
	work := t.TempDir()
	dir := filepath.Join(work, "ro")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "s.db")
	if r := cli(t, work, "run", "--objective", "synthetic/branin", "--acq", "random", "--init", "4", "--iters", "1", "--batch", "2", "--db", db, "--study", "ro"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	sum := fileSum(t, db)

	cmd := readOnlyCmd(t, dir, "trials", "--db", db, "--study", "ro", "--format", "json")
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("trials in a read-only directory: %v: %s", err, se.String())
	}
	if n := strings.Count(so.String(), "\n"); n != 6 {
		t.Fatalf("trials printed %d lines, want 6:\n%s", n, so.String())
	}
	for _, l := range strings.Split(strings.TrimSpace(so.String()), "\n") {
		var jt jsonTrial
		if err := json.Unmarshal([]byte(l), &jt); err != nil || jt.State != "complete" || jt.Value == nil {
			t.Fatalf("trials line %q (%v)", l, err)
		}
	}

	cmd = readOnlyCmd(t, dir, "serve", "--db", db, "--addr", "127.0.0.1:0")
	link := startServeCmd(t, cmd)
	if code, body := httpGet(t, link+"api/trials?name=ro&format=csv"); code != 200 || strings.Count(body, "\n") != 7 {
		t.Fatalf("serve in a read-only directory: %d %q", code, body)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if fileSum(t, db) != sum {
		t.Fatal("the database file changed")
	}

	// In a writable directory too, reading writes nothing to the file.
	if r := cli(t, work, "trials", "--db", db, "--study", "ro"); r.code != 0 {
		t.Fatalf("trials: %d %s", r.code, r.stderr)
	}
	if fileSum(t, db) != sum {
		t.Fatal("trials changed the database file")
	}
}

// startServeCmd starts a 'serve' command and returns the link it printed.
func startServeCmd(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var se bytes.Buffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) || !strings.Contains(line, "http://") {
		cmd.Wait()
		t.Fatalf("serve printed no address (%v): %q %s", err, line, se.String())
	}
	go io.Copy(io.Discard, out)
	return strings.TrimSpace(line[strings.Index(line, "http://"):])
}
