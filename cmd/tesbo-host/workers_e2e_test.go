package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
	"github.com/tesbo/tesbo/store"
)

// napScript is an objective whose evaluations take 40 ms: long enough for
// kill -9 to land mid-evaluation.
const napScript = `package nap

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "nap", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	select {
	case <-time.After(40 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return -(x[0] - 0.3) * (x[0] - 0.3), nil
}
`

// workerSetup writes the nap plugin and returns the test directory and
// the plugins directory.
func workerSetup(t *testing.T) (dir, plugins string) {
	dir = t.TempDir()
	plugins = filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "nap.go"), napScript)
	return dir, plugins
}

// waitStudy waits until the study exists in db.
func waitStudy(t *testing.T, url, name string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		db, err := store.Open(url, store.Options{})
		if err != nil {
			continue
		}
		_, err = db.Study(context.Background(), name)
		db.Close()
		if err == nil {
			return
		}
	}
	t.Fatalf("study %s not created within a minute", name)
}

// jsonTrial is a line of 'trials --format json'.
type jsonTrial struct {
	ID       int                `json:"id"`
	State    string             `json:"state"`
	Params   map[string]float64 `json:"params"`
	Value    *float64           `json:"value"`
	Worker   string             `json:"worker"`
	Attempts int                `json:"attempts"`
}

// checkTrialsCLI lists the study with 'trials --format json' and checks
// that it holds exactly n trials, each complete once with the objective's
// value at its point.
func checkTrialsCLI(t *testing.T, dir, url, study string, n int) []jsonTrial {
	t.Helper()
	r := cli(t, dir, "trials", "--db", url, "--study", study, "--format", "json")
	if r.code != 0 {
		t.Fatalf("trials: exit %d: %s", r.code, r.stderr)
	}
	var out []jsonTrial
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var jt jsonTrial
		if err := json.Unmarshal([]byte(l), &jt); err != nil {
			t.Fatalf("trials line %q: %v", l, err)
		}
		out = append(out, jt)
	}
	if len(out) != n {
		t.Fatalf("%d trials, want exactly %d", len(out), n)
	}
	for i, jt := range out {
		x := jt.Params["x"]
		if jt.ID != i || jt.State != "complete" || jt.Value == nil || *jt.Value != -(x-0.3)*(x-0.3) || jt.Worker == "" {
			t.Fatalf("trial %d: %+v", i, jt)
		}
	}
	return out
}

// proposerPID returns the PID holding the study's lease (0: none).
func proposerPID(url string) int {
	db, err := store.Open(url, store.Options{})
	if err != nil {
		return 0
	}
	defer db.Close()
	err = db.CheckLease(context.Background(), 1)
	if held, ok := err.(*store.LeaseHeldError); ok {
		return held.PID
	}
	return 0
}

// Eight worker processes on one 400-evaluation PostgreSQL study, with a
// random one killed (-9) and restarted every 300 ms and the proposer
// killed once: every trial completes exactly once with its objective's
// value, the study has exactly its budget, and another worker takes the
// proposer's place within one lease period.
func TestWorkersKilled(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	const init, iters, batch = 8, 49, 8 // 400 evaluations
	procs := make([]*proc, 8)
	procs[0] = start(t, dir, "run", "--db", url, "--study", "w", "--objective", "nap", "--acq", "random",
		"--init", fmt.Sprint(init), "--iters", fmt.Sprint(iters), "--batch", fmt.Sprint(batch),
		"--parallel", "1", "--retries", "5", "--plugins", plugins, "--log-level", "error")
	waitStudy(t, url, "w")
	workerArgs := []string{"worker", "--db", url, "--study", "w", "--plugins", plugins, "--log-level", "error"}
	for i := 1; i < len(procs); i++ {
		procs[i] = start(t, dir, workerArgs...)
	}
	defer func() {
		for _, p := range procs {
			p.cmd.Process.Kill()
			<-p.done
		}
	}()
	rng := rand.New(rand.NewPCG(5, 6))
	kills, proposerKilled := 0, false
	finished := func() bool {
		for _, p := range procs {
			select {
			case <-p.done:
			default:
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(3 * time.Minute); !finished(); {
		if time.Now().After(deadline) {
			t.Fatalf("the study did not finish in 3 minutes (%d kills)", kills)
		}
		time.Sleep(300 * time.Millisecond)
		i := rng.IntN(len(procs))
		if kills == 5 && !proposerKilled {
			// Kill the proposer: another worker must take over in one lease period.
			pid := proposerPID(url)
			for j, p := range procs {
				if p.cmd.Process.Pid == pid {
					i = j
					proposerKilled = true
				}
			}
			if proposerKilled {
				procs[i].cmd.Process.Signal(syscall.SIGKILL)
				<-procs[i].done
				t0 := time.Now()
				for {
					if p := proposerPID(url); p != 0 && p != pid {
						break
					}
					if finished() {
						break
					}
					if time.Since(t0) > 30*time.Second {
						t.Fatal("no new proposer within one lease period (30 s)")
					}
					time.Sleep(20 * time.Millisecond)
				}
				procs[i] = start(t, dir, workerArgs...)
				kills++
				continue
			}
		}
		select {
		case <-procs[i].done:
			continue // finished: the study is ending
		default:
		}
		procs[i].cmd.Process.Signal(syscall.SIGKILL)
		<-procs[i].done
		procs[i] = start(t, dir, workerArgs...)
		kills++
	}
	for _, p := range procs {
		if p.err != nil {
			t.Errorf("a worker failed: %v: %s", p.err, p.se.String())
		}
	}
	if kills < 5 || !proposerKilled {
		t.Fatalf("only %d kills (proposer killed: %v): the test did not test", kills, proposerKilled)
	}
	checkTrialsCLI(t, dir, url, "w", init+iters*batch)
	t.Logf("%d kills", kills)
}

// PostgreSQL restarted mid-study (pg_ctl stop -m fast, then start): the
// workers wait for it and the study completes with nothing lost.
func TestWorkersPostgresRestart(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	const init, iters, batch = 4, 15, 4
	run := start(t, dir, "run", "--db", url, "--study", "r", "--objective", "nap", "--acq", "qei",
		"--init", fmt.Sprint(init), "--iters", fmt.Sprint(iters), "--batch", fmt.Sprint(batch),
		"--parallel", "2", "--plugins", plugins, "--log-level", "error")
	waitStudy(t, url, "r")
	w := start(t, dir, "worker", "--db", url, "--study", "r", "--plugins", plugins, "--parallel", "2", "--log-level", "error")
	time.Sleep(time.Second)
	pg.Stop(t)
	time.Sleep(time.Second)
	pg.Start(t)
	for _, p := range []*proc{run, w} {
		select {
		case <-p.done:
		case <-time.After(2 * time.Minute):
			t.Fatal("the study did not finish after the restart")
		}
		if p.err != nil {
			t.Fatalf("worker failed across the restart: %v: %s", p.err, p.se.String())
		}
	}
	checkTrialsCLI(t, dir, url, "r", init+iters*batch)
}

// A coordinator on PostgreSQL killed with -9 mid-evaluation and resumed
// re-runs the evaluations it had in flight, with the default --retries 0
// as on SQLite: none of them fails as "worker lost".
func TestPostgresCoordinatorKilledResumes(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	args := []string{"--db", url, "--study", "k", "--plugins", plugins, "--log-level", "error"}
	p := start(t, dir, append([]string{"run", "--objective", "nap", "--acq", "random", "--init", "4", "--iters", "4",
		"--batch", "4", "--parallel", "4"}, args...)...)
	waitStudy(t, url, "k")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no evaluation in flight within a minute")
		}
		if running(t, url, "k") > 0 {
			break
		}
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	if r := cli(t, dir, append([]string{"resume"}, args[:len(args)-2]...)...); r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	checkTrialsCLI(t, dir, url, "k", 4+4*4)
}

// running counts the study's trials in flight.
func running(t *testing.T, url, name string) int {
	t.Helper()
	db, err := store.Open(url, store.Options{})
	if err != nil {
		return 0
	}
	defer db.Close()
	s, err := db.Study(context.Background(), name)
	if err != nil {
		return 0
	}
	_, n, _, err := db.QueueCounts(context.Background(), s.ID)
	if err != nil {
		return 0
	}
	return n
}

// A worker started before the coordinator's 'run' has created the study
// (a launcher starting everything at once) waits for it and joins, rather
// than exiting at once with "study not found".
func TestWorkerWaitsForTheStudy(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	w := start(t, dir, "worker", "--db", url, "--study", "late", "--plugins", plugins, "--log-level", "error")
	time.Sleep(time.Second)
	if r := cli(t, dir, "run", "--db", url, "--study", "late", "--objective", "nap", "--acq", "random", "--init", "4",
		"--iters", "4", "--batch", "4", "--plugins", plugins, "--log-level", "error"); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		w.cmd.Process.Kill()
		t.Fatal("the worker did not finish")
	}
	if w.err != nil {
		t.Fatalf("worker: %v: %s", w.err, w.se.String())
	}
	checkTrialsCLI(t, dir, url, "late", 4+4*4)
}
