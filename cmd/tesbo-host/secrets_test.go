package main

import (
	"bufio"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// withPassword puts password into a test cluster's URL (the cluster trusts
// every local connection, so any password is accepted).
func withPassword(url, password string) string {
	return strings.Replace(url, "postgres://postgres@", "postgres://postgres:"+password+"@", 1)
}

// TestPostgresPasswordHidden: a password given in --db shows in none of
// what the host prints: serve's start-up line, a run's output and logs,
// the hints that repeat the --db value.
func TestPostgresPasswordHidden(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := withPassword(pg.NewDatabase(t), "hunter2")
	dir, plugins := workerSetup(t)
	r := cli(t, dir, "run", "--db", url, "--study", "s", "--objective", "nap", "--acq", "qei",
		"--init", "2", "--iters", "1", "--batch", "2", "--plugins", plugins, "--log-level", "debug")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	for _, out := range []string{r.stdout, r.stderr} {
		if strings.Contains(out, "hunter2") {
			t.Errorf("run printed the password:\n%s", out)
		}
	}
	if !strings.Contains(r.stdout, "trials --db 'postgres://postgres:xxxxx@") {
		t.Errorf("run's hint does not name the database with its password masked:\n%s", r.stdout)
	}
	if n := strings.Count(r.stderr, "warning: the --db URL holds a password"); n != 1 || !strings.Contains(r.stderr, "set PGPASSWORD") {
		t.Errorf("run warned %d times about the password in --db, want once, suggesting PGPASSWORD:\n%s", n, r.stderr)
	}

	cmd := exec.Command(binPath, "serve", "--addr", "127.0.0.1:0", "--db", url)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var se testenv.SyncBuffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("serve printed no start-up line: %v: %s", err, se.String())
	}
	go io.Copy(io.Discard, out)
	if strings.Contains(line, "hunter2") || !strings.Contains(line, "serving postgres://postgres:xxxxx@/") {
		t.Errorf("serve's start-up line: %q", line)
	}
	checkCmdlineMasked(t, cmd.Process.Pid)
}

func TestMaskURLPasswords(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:hunter2@h/db":                        "postgres://u:xxxxxxx@h/db",
		"--db=postgresql://u:p%40ss@h:5432/db?sslmode=off": "--db=postgresql://u:xxxxxx@h:5432/db?sslmode=off",
		"postgres://u@/db?host=/s&password=hunter2&x=1":    "postgres://u@/db?host=/s&password=xxxxxxx&x=1",
		"postgres://u@h/db":                                "postgres://u@h/db",
		"password=hunter2":                                 "password=hunter2", // no URL: not touched
		"tesbo.db":                                         "tesbo.db",
	} {
		if got := maskURLPasswords(in); got != want {
			t.Errorf("maskURLPasswords(%q) = %q, want %q", in, got, want)
		}
	}
}

// serve's --token is masked in the command line as a URL password is
// (every local user reads /proc/PID/cmdline), in both spellings.
func TestMaskArgs(t *testing.T) {
	in := []string{"tesbo-host", "serve", "--db", "postgres://u:hunter2@h/db", "--token", "0123456789abcdef", "--token=abcdefghijklmnop", "--addr", "x"}
	want := []string{"tesbo-host", "serve", "--db", "postgres://u:xxxxxxx@h/db", "--token", "xxxxxxxxxxxxxxxx", "--token=xxxxxxxxxxxxxxxx", "--addr", "x"}
	got := maskArgs(in)
	if !slices.Equal(got, want) {
		t.Fatalf("maskArgs = %q, want %q", got, want)
	}
	for i := range in {
		if len(got[i]) != len(in[i]) {
			t.Fatalf("argument %d changed length", i)
		}
	}
}
