package loader

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// envDiscoverHost runs the test binary as a host that discovers and lists
// the plugins directory it names (discoverHostMain).
const envDiscoverHost = "TESBO_LOADER_TEST_DISCOVER"

func init() {
	testModes[envDiscoverHost] = discoverHostMain
}

// discoverHostMain lists a plugins directory under a 1 GiB data limit, one
// line per plugin: NAME, a tab, and its error or "ok".
func discoverHostMain() int {
	lim := &unix.Rlimit{Cur: 1 << 30, Max: 1 << 30}
	if err := unix.Setrlimit(unix.RLIMIT_DATA, lim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := Discover(context.Background(), os.Getenv(envDiscoverHost), Options{Logger: zerolog.New(os.Stderr)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer r.Close()
	for _, p := range r.List(context.Background()) {
		msg := "ok"
		if p.Err != nil {
			msg = strings.ReplaceAll(p.Err.Error(), "\n", " ")
		}
		fmt.Printf("%s\t%s\n", p.Name, msg)
	}
	return 0
}

// TestDiscoverSkipsNonRegular: a named pipe called x.go (which blocked
// discovery forever), a symlink to /dev/zero called zero.go (read until the
// host ran out of memory), a script directory holding a pipe and a script
// larger than MaxScriptFileSize are each reported as broken with the
// reason, and the healthy script beside them is listed. The host runs in a
// subprocess with a data limit and a deadline, so the old behaviour fails
// the test instead of hanging or exhausting the machine.
func TestDiscoverSkipsNonRegular(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{"quad.go": "testdata/scripts/objective.go"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(syscall.Mkfifo(filepath.Join(dir, "x.go"), 0o644))
	must(syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o755))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero.go")))
	must(os.Mkdir(filepath.Join(dir, "d"), 0o755))
	src, err := os.ReadFile("testdata/scripts/objective.go")
	must(err)
	must(os.WriteFile(filepath.Join(dir, "d", "a.go"), src, 0o644))
	must(syscall.Mkfifo(filepath.Join(dir, "d", "y.go"), 0o644))
	big := append(append([]byte(nil), src...), []byte("\nvar pad = `"+strings.Repeat("x", MaxScriptFileSize)+"`\n")...)
	must(os.WriteFile(filepath.Join(dir, "big.go"), big, 0o644))

	exe, err := os.Executable()
	must(err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envDiscoverHost+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("discovery did not finish within a minute (blocked on the pipe?)\nstderr: %s", stderr.String())
	}
	if err != nil {
		t.Fatalf("host: %v\nstderr: %s", err, stderr.String())
	}
	got := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		name, msg, _ := strings.Cut(sc.Text(), "\t")
		got[name] = msg
	}
	t.Logf("listed:\n%s", out)
	want := map[string][]string{
		"quad": {"ok"},
		"x":    {"x.go", "not a regular file", "named pipe", "skipped"},
		"pipe": {"not a regular file", "named pipe"},
		"zero": {"zero.go", "not a regular file", "character device"},
		"d":    {"y.go", "not a regular file", "named pipe"},
		"big":  {"big.go", "more than the 1 MiB", "MaxScriptFileSize"},
	}
	for name, frags := range want {
		msg, ok := got[name]
		if !ok {
			t.Errorf("%s not listed", name)
			continue
		}
		for _, f := range frags {
			if !strings.Contains(msg, f) {
				t.Errorf("%s: %q lacks %q", name, msg, f)
			}
		}
	}
	if !strings.Contains(stderr.String(), "skipping plugins-directory entry") {
		t.Errorf("no warning logged for the skipped entries:\n%s", stderr.String())
	}
}
