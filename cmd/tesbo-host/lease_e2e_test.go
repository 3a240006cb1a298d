package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/store"
)

// slowScript is an objective whose evaluations take 150 ms, so that a
// second command can be started while a run is evaluating.
const slowScript = `package slow

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "slow", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	select {
	case <-time.After(150 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return -(x[0] - 0.3) * (x[0] - 0.3), nil
}
`

// waitLines waits until p has printed n lines (or ended, or 60 s passed).
func waitLines(t *testing.T, p *proc, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for p.nLines() < n {
		select {
		case <-p.done:
			t.Fatalf("ended before %d records: %v %s", n, p.err, p.se.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %d records within a minute", n)
		}
	}
}

// heldLine matches the one line a command refused for a study in use
// prints.
var heldLine = regexp.MustCompile(`^tesbo-host: study "st" is in use by host \S+ pid (\d+) since \S+ \(lease expires in \d+s\); wait for it to finish or stop it$`)

// A resume started while a run is evaluating the same study is refused at
// once (exit 2, one line naming the run's host and PID), wastes no
// evaluation and writes nothing; the run finishes normally. After the run
// is killed with kill -9, a resume takes the study over at once.
func TestSecondProcessRefused(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "slow.go"), slowScript)
	const init, iters, batch = 2, 12, 2
	runArgs := func(study string) []string {
		return []string{"run", "--objective", "slow", "--acq", "random", "--init", fmt.Sprint(init),
			"--iters", fmt.Sprint(iters), "--batch", fmt.Sprint(batch), "--seed", "3", "--db", "s.db",
			"--study", study, "--json", "--plugins", plugins, "--log-level", "error",
			// Scripts' calls are otherwise limited to 10 s, which a
			// loaded CI machine has exceeded: a timeout is not what this
			// test is about.
			"--eval-timeout", "5m"}
	}
	resume := []string{"resume", "--db", "s.db", "--study", "st", "--iters", fmt.Sprint(iters + 1), "--json", "--plugins", plugins}
	dbPath := filepath.Join(dir, "s.db")

	p := start(t, dir, runArgs("st")...)
	waitLines(t, p, 2)
	before, _ := loadTrials(t, dbPath, "st")
	for range 2 { // twice: a refusal leaves nothing behind that refuses differently
		r := cli(t, dir, resume...)
		lines := errorLines(r.stderr)
		if r.code != 2 || len(lines) != 1 || r.stdout != "" {
			t.Fatalf("resume during the run: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		m := heldLine.FindStringSubmatch(lines[0])
		if m == nil || m[1] != fmt.Sprint(p.cmd.Process.Pid) {
			t.Fatalf("refusal %q does not name the run's pid %d", lines[0], p.cmd.Process.Pid)
		}
	}
	<-p.done
	if p.err != nil {
		t.Fatalf("the run failed next to a refused resume: %v: %s", p.err, p.se.String())
	}
	trials, its := loadTrials(t, dbPath, "st")
	if len(trials) != init+iters*batch || len(its) != iters+1 || len(trials) < len(before) {
		t.Fatalf("%d trials, %d iterations", len(trials), len(its))
	}
	for _, tr := range trials {
		if tr.Status != store.Complete || tr.Attempts != 1 {
			t.Fatalf("trial %d: %s after %d attempts (evaluated twice?): %s", tr.ID, tr.Status, tr.Attempts, tr.Error)
		}
	}
	// The refused resumes changed nothing: the budget is the run's.
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	settings, _, err := host.StoredSettings(context.Background(), hostStorage(db), "st")
	db.Close()
	if err != nil || settings.Iters != iters {
		t.Fatalf("stored iters %d (%v), want %d", settings.Iters, err, iters)
	}

	// kill -9: the lease stays behind, held by a dead process of this host.
	k := start(t, dir, runArgs("k")...)
	waitLines(t, k, 1)
	if err := k.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-k.done
	r := cli(t, dir, "resume", "--db", "s.db", "--study", "k", "--json", "--plugins", plugins)
	if r.code != 0 {
		t.Fatalf("resume after kill -9: exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "in use") {
		t.Fatalf("resume after kill -9 saw the dead run's lease: %s", r.stderr)
	}
	killed, _ := loadTrials(t, dbPath, "k")
	if len(killed) != init+iters*batch {
		t.Fatalf("%d trials after the resume", len(killed))
	}
}
