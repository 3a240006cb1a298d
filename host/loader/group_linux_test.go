package loader

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// envForkHost runs the test binary as a host that starts the objective
// "wrapper" from the plugins directory it names (forkHostMain).
const envForkHost = "TESBO_LOADER_TEST_FORKHOST"

func init() {
	testModes[envForkHost] = forkHostMain
}

// forkHostMain starts and evaluates the objective "wrapper", prints READY
// and waits to be killed.
func forkHostMain() int {
	ctx := context.Background()
	r, err := Discover(ctx, os.Getenv(envForkHost), Options{Logger: zerolog.New(os.Stderr).Level(zerolog.WarnLevel)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	o, err := r.Objective(ctx, "wrapper")
	if err == nil {
		_, err = o.Evaluate(ctx, []float64{0.5, 0.5})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("READY")
	select {}
}

// descendants returns every live process below pid.
func descendants(pid int) []int {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := procStat(p); ok && state != "Z" {
			kids[ppid] = append(kids[ppid], p)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range kids[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// wrapperScript is a plugin that forks (a `sleep` in the background) and
// runs the real plugin without exec, so both are the host's grandchildren,
// out of reach of PR_SET_PDEATHSIG.
func wrapperScript(t *testing.T, dir string) {
	t.Helper()
	script := "#!/bin/sh\nsleep 1000 &\n" + filepath.Join(testBin, "objective") + "\n"
	if err := os.WriteFile(filepath.Join(dir, "wrapper"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestNoGrandchildOutlivesKilledHost: a host killed with SIGKILL takes
// down its plugins' whole process groups: a wrapper script's program
// (started without exec) and what the plugin forked, not only the direct
// child that PR_SET_PDEATHSIG reaches.
func TestNoGrandchildOutlivesKilledHost(t *testing.T) {
	dir := t.TempDir()
	wrapperScript(t, dir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envForkHost+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "READY\n" {
		t.Fatalf("host helper: %q, %v", line, err)
	}
	below := descendants(cmd.Process.Pid)
	var names []string
	for _, p := range below {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		names = append(names, fmt.Sprintf("%d %s", p, strings.ReplaceAll(string(b), "\x00", " ")))
	}
	t.Logf("processes below the host:\n%s", strings.Join(names, "\n"))
	var sleeps, objectives int
	for _, n := range names {
		switch {
		case strings.Contains(n, "sleep 1000"):
			sleeps++
		case strings.Contains(n, filepath.Join(testBin, "objective")) && !strings.Contains(n, "/bin/sh"):
			objectives++
		}
	}
	if sleeps != 1 || objectives != 1 {
		t.Fatalf("want the wrapper's sleep and objective running below the host, got %d and %d", sleeps, objectives)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []int
		for _, p := range below {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived the host killed with SIGKILL", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseKillsPluginGroup: Close (and so a restart or a timeout's kill)
// ends what the plugin started, not only the plugin process, and reaps
// the group's watcher.
func TestCloseKillsPluginGroup(t *testing.T) {
	dir := t.TempDir()
	wrapperScript(t, dir)
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "wrapper")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Evaluate(ctx, []float64{0.5, 0.5}); err != nil {
		t.Fatal(err)
	}
	below := descendants(os.Getpid())
	if len(below) < 3 {
		t.Fatalf("processes below the host: %v, want the wrapper, its sleep and its objective", below)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left []int
		for _, p := range below {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes %v outlived Close", left)
		}
	}
	if kids := children(os.Getpid()); len(kids) != 0 {
		t.Fatalf("children left after Close (a watcher not reaped?): %v", kids)
	}
}
