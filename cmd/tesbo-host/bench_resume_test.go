package main

import (
	"bufio"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tesbo/tesbo/bench"
	"github.com/tesbo/tesbo/store"
)

// benchProc is a running bench whose stderr is read line by line.
type benchProc struct {
	cmd      *exec.Cmd
	finished chan struct{} // closed at the first "run finished" line
	done     chan struct{} // closed when the process has exited
	mu       sync.Mutex
	stderr   []string
}

func startBench(t *testing.T, dir string, args ...string) *benchProc {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TESBO_PLUGINS="+pluginsDir)
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &benchProc{cmd: cmd, finished: make(chan struct{}), done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(errPipe)
		first := true
		for sc.Scan() {
			p.mu.Lock()
			p.stderr = append(p.stderr, sc.Text())
			p.mu.Unlock()
			if first && strings.Contains(sc.Text(), `"message":"run finished"`) {
				first = false
				close(p.finished)
			}
		}
		cmd.Wait()
		close(p.done)
	}()
	return p
}

// SIGKILL the bench after its first run finished, while the second is
// mid-way, run the same command again, and check that the evaluations
// stored before the kill are kept and that the results are complete, hold
// every (run, iteration) once, and equal those of an uninterrupted bench
// with the same flags.
func TestBenchCLIKillResume(t *testing.T) {
	dir := t.TempDir()
	const iters, seeds = 10, 3
	acqs := []string{"random", "ei"} // runs in this order (seed index outermost)
	runs := benchRuns([]string{"synthetic/branin"}, acqs, []int{1}, seeds)
	args := func(out string) []string {
		return []string{"bench", "--problems", "synthetic/branin", "--acqs", strings.Join(acqs, ","),
			"--seeds", fmt.Sprint(seeds), "--iters", fmt.Sprint(iters), "--jobs", "1", "--out", out}
	}

	dbPath, second := killBenchMidRun(t, dir, args("out"))

	// What the killed bench stored; the rerun must keep every completed
	// evaluation (a run cut short resumes, it does not start over).
	kept := completedTrials(t, dbPath, runs)

	r := cli(t, dir, args("out")...)
	if r.code != 0 {
		t.Fatalf("rerun after kill: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var done, skipped int
	for _, l := range progressLines(t, r.stderr) {
		switch l.Status {
		case "done":
			done++
		case "skipped":
			skipped++
		}
	}
	// At least the run reported before the kill is skipped; the killed one
	// and the rest are run (resumed or started) now.
	if skipped < 1 || done < 1 || done+skipped != len(runs) {
		t.Fatalf("rerun: %d done, %d skipped of %d runs:\n%s", done, skipped, len(runs), r.stderr)
	}
	t.Logf("after the kill: %d runs skipped, %d resumed or started", skipped, done)

	if ref := cli(t, dir, args("ref")...); ref.code != 0 {
		t.Fatalf("reference bench: exit %d: %s", ref.code, ref.stderr)
	}
	got := readRunsCSV(t, filepath.Join(dir, "out", bench.RunsFile))
	want := readRunsCSV(t, filepath.Join(dir, "ref", bench.RunsFile))
	if len(got) != len(runs)*iters || len(want) != len(got) {
		t.Fatalf("runs.csv: %d rows after kill and resume, %d uninterrupted; want %d", len(got), len(want), len(runs)*iters)
	}
	// Everything but the timings is reproduced exactly.
	cols := []string{"problem", "acquisition", "batch", "seed", "study_seed", "iteration", "evaluations",
		"regret", "log10_regret", "best_value", "fallback", "best_eval_regret", "best_true_regret"}
	for i := range want {
		for _, c := range cols {
			if got[i][c] != want[i][c] {
				t.Fatalf("row %d column %s: %q after kill and resume, %q uninterrupted", i, c, got[i][c], want[i][c])
			}
		}
	}
	partial := checkKeptTrials(t, dbPath, runs, kept, iters)
	if partial < bench.DefaultInit+3 {
		t.Errorf("%d evaluations of runs cut short by the kill were kept, want ≥ %d (of %s)", partial, bench.DefaultInit+3, second)
	}
	t.Logf("%d evaluations of runs cut short by the kill were kept", partial)
}

// killBenchMidRun starts the bench of TestBenchCLIKillResume (args, which
// write to dir/out) and SIGKILLs it once its first run has finished and
// its second (ei, seed 0) has completed a few BO iterations. It returns the
// bench's database and the second run's study.
func killBenchMidRun(t *testing.T, dir string, args []string) (dbPath, second string) {
	t.Helper()
	p := startBench(t, dir, args...)
	select {
	case <-p.finished:
	case <-p.done:
		t.Fatalf("bench exited before finishing a run: %s", strings.Join(p.stderr, "\n"))
	case <-time.After(2 * time.Minute):
		p.cmd.Process.Kill()
		t.Fatal("no run finished within 2 minutes")
	}
	// The first run (random, seed 0) has finished; kill the bench once the
	// second (ei, seed 0) has completed a few BO iterations, so that one run
	// is cut short mid-way. An ei iteration takes milliseconds; the poll is
	// far faster than the remaining iterations.
	dbPath = filepath.Join(dir, "out", bench.DBFile)
	second = benchRun{"synthetic/branin", "ei", 1, 0}.studyName()
	reader, err := sql.Open("sqlite", "file:"+dbPath+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	for deadline := time.Now().Add(time.Minute); ; {
		var n int
		err := reader.QueryRow(`SELECT COUNT(*) FROM trials t JOIN studies s ON s.id = t.study_id
			WHERE s.name = ? AND t.status = 'complete'`, second).Scan(&n)
		if err == nil && n >= bench.DefaultInit+3 {
			break
		}
		select {
		case <-p.done:
			t.Fatalf("bench exited before the kill: %s", strings.Join(p.stderr, "\n"))
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.cmd.Process.Kill()
			t.Fatalf("%s did not reach 3 BO iterations within a minute (last error %v)", second, err)
		}
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("bench finished before the kill (%v): the suite is too short for this test", p.cmd.ProcessState)
	}
	return dbPath, second
}

// completedTrials are the complete trials stored for each run.
func completedTrials(t *testing.T, dbPath string, runs []benchRun) map[benchRun][]store.Trial {
	t.Helper()
	kept := map[benchRun][]store.Trial{}
	for _, run := range runs {
		if studyExists(dbPath, run.studyName()) {
			tr, _ := loadTrials(t, dbPath, run.studyName())
			for _, x := range tr {
				if x.Status == store.Complete {
					kept[run] = append(kept[run], x)
				}
			}
		}
	}
	return kept
}

// checkKeptTrials checks that every run of TestBenchCLIKillResume has all
// its trials, complete, including the evaluations kept from before the
// kill, and returns how many kept evaluations belong to runs cut short.
func checkKeptTrials(t *testing.T, dbPath string, runs []benchRun, kept map[benchRun][]store.Trial, iters int) int {
	t.Helper()
	partial := 0
	for _, run := range runs {
		tr, _ := loadTrials(t, dbPath, run.studyName())
		byID := map[int]store.Trial{}
		for _, x := range tr {
			byID[x.ID] = x
		}
		for _, k := range kept[run] {
			if now, ok := byID[k.ID]; !ok || key(now.X) != key(k.X) || now.Value != k.Value || now.Status != store.Complete {
				t.Errorf("%s: evaluation %d stored before the kill (%v = %v) was not kept", run.studyName(), k.ID, k.X, k.Value)
			}
		}
		if n := len(kept[run]); n > 0 && n < bench.DefaultInit+iters {
			partial += n
		}
		if len(tr) != bench.DefaultInit+iters {
			t.Errorf("%s: %d trials, want %d", run.studyName(), len(tr), bench.DefaultInit+iters)
		}
		for _, x := range tr {
			if x.Status != store.Complete {
				t.Errorf("%s: trial %d is %s", run.studyName(), x.ID, x.Status)
			}
		}
	}
	return partial
}
