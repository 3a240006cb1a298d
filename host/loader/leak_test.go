package loader

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

const envTestHost = "TESBO_LOADER_TEST_HOST"

// children returns the pids of the live (non-zombie) child processes of pid.
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cpid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state, ok := procStat(cpid); ok && ppid == pid && state != "Z" {
			out = append(out, cpid)
		}
	}
	return out
}

// plugins returns the pids of the host's children that are plugin
// processes, not the watchers leading their process groups.
func plugins(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		if !isWatcher(c) {
			out = append(out, c)
		}
	}
	return out
}

// isWatcher reports whether pid is a plugin group's watcher (procGroup).
func isWatcher(pid int) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.Contains(string(b), "tesbo-plugin-watcher")
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	_, state, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

func procStat(pid int) (ppid int, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return 0, "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, "", false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, f[0], err == nil
}

// startAll starts one executable, one script objective and one script
// acquisition, which makes three children.
func startAll(ctx context.Context, r *Registry) error {
	for _, name := range []string{"objective", "quad"} {
		o, err := r.Objective(ctx, name)
		if err != nil {
			return err
		}
		if _, err := o.Evaluate(ctx, []float64{0.5, 0.5}); err != nil {
			return err
		}
	}
	a, err := r.Acquisition(ctx, "ucbscript")
	if err != nil {
		return err
	}
	_, err = a.Score(ctx, testPost, [][]float64{{0.5, 0.5}})
	return err
}

func leakDir(t testing.TB) string {
	return pluginsDir(t, []string{"objective"}, map[string]string{
		"quad.go":      "testdata/scripts/objective.go",
		"ucbscript.go": "testdata/scripts/acq.go",
	})
}

func TestNoLeaksAfterClose(t *testing.T) {
	if os.Getenv("TESBO_NO_PROC") != "" || !fileExists("/proc/self/stat") {
		t.Skip("needs /proc")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	before := len(children(os.Getpid()))
	r := open(t, leakDir(t), Options{})
	if err := startAll(ctxT(t), r); err != nil {
		t.Fatal(err)
	}
	if n := len(plugins(os.Getpid())) - before; n != 3 {
		t.Fatalf("%d plugin processes running, want 3", n)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if kids := children(os.Getpid()); len(kids) != before {
		t.Fatalf("children after Close: %v", kids)
	}
	// Closed registries refuse new work instead of starting processes.
	if _, err := r.Objective(ctxT(t), "objective"); err == nil {
		t.Fatal("Objective after Close succeeded")
	}
}

// TestNoChildOutlivesKilledHost runs a host (this test binary in host mode)
// that starts plugins, kills it with SIGTERM and checks that every plugin
// process is gone.
func TestNoChildOutlivesKilledHost(t *testing.T) {
	if !fileExists("/proc/self/stat") {
		t.Skip("needs /proc")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), envTestHost+"="+leakDir(t))
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
			if err != nil {
				t.Fatalf("host helper: %v", err)
			}
			var pids []int
			for _, f := range strings.Fields(strings.TrimPrefix(line, "PIDS")) {
				pid, _ := strconv.Atoi(f)
				pids = append(pids, pid)
			}
			if n := len(pids) - countWatchers(pids); n != 3 {
				t.Fatalf("host helper reported %q, want 3 plugin pids (and their watchers)", line)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(5 * time.Second)
			for _, pid := range pids {
				for alive(pid) {
					if time.Now().After(deadline) {
						syscall.Kill(pid, syscall.SIGKILL)
						t.Fatalf("plugin pid %d outlived its host (%v)", pid, sig)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}
}

func countWatchers(pids []int) int {
	n := 0
	for _, p := range pids {
		if isWatcher(p) {
			n++
		}
	}
	return n
}

// testHostMain is the host helper: it starts plugins from the directory in
// $TESBO_LOADER_TEST_HOST, prints their pids and waits to be killed.
func testHostMain() int {
	dir := os.Getenv(envTestHost)
	l := zerolog.New(os.Stderr).Level(zerolog.WarnLevel)
	r, err := Discover(context.Background(), dir, Options{Logger: l})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := startAll(context.Background(), r); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var pids []string
	for _, p := range children(os.Getpid()) {
		pids = append(pids, strconv.Itoa(p))
	}
	fmt.Println("PIDS " + strings.Join(pids, " "))
	select {}
}
