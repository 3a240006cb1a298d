package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/store"
)

// End to end on synthetic/branin: every --json record checked field by
// field against the stored trials and the noise-free Branin.
func TestRunJSON(t *testing.T) {
	dir := t.TempDir()
	const iters, batch, init = 6, 2, 3
	r := cli(t, dir, "run", "--objective", "synthetic/branin", "--acq", "ei", "--iters", fmt.Sprint(iters),
		"--batch", fmt.Sprint(batch), "--init", fmt.Sprint(init), "--seed", "3", "--db", "b.db", "--study", "s", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if lines := errorLines(r.stderr); len(lines) != 0 {
		t.Fatalf("stderr carries non-log lines: %q", lines)
	}
	recs := parseRecords(t, r.stdout)
	if len(recs) != iters {
		t.Fatalf("%d records, want %d:\n%s", len(recs), iters, r.stdout)
	}
	trials, its := loadTrials(t, filepath.Join(dir, "b.db"), "s")
	if len(trials) != init+iters*batch {
		t.Fatalf("%d trials stored", len(trials))
	}
	fn := testfunc.Branin()
	prevEvals := 0
	for i, m := range recs {
		rec := decode(t, m)
		if rec.Iter != i+1 {
			t.Fatalf("record %d: iter %d", i, rec.Iter)
		}
		if rec.Evals != init+(i+1)*batch || rec.Evals <= prevEvals {
			t.Fatalf("record %d: evals %d after %d", i, rec.Evals, prevEvals)
		}
		prevEvals = rec.Evals
		if len(rec.Batch) != batch || len(rec.Values) != batch {
			t.Fatalf("record %d: batch %v values %v", i, rec.Batch, rec.Values)
		}
		for k := range rec.Batch {
			tr := trials[init+i*batch+k]
			if tr.Iteration != rec.Iter || key(tr.X) != key(rec.Batch[k]) || rec.Values[k] == nil || *rec.Values[k] != tr.Value {
				t.Fatalf("record %d point %d: %v=%v, stored %+v", i, k, rec.Batch[k], rec.Values[k], tr)
			}
			if len(tr.X) != 2 || tr.X[0] < 0 || tr.X[0] > 1 || tr.X[1] < 0 || tr.X[1] > 1 {
				t.Fatalf("point outside the domain: %v", tr.X)
			}
		}
		// best_x/best_value: synthetic objectives evaluate without noise, so
		// the default recommendation (auto → refine, the paper's x̄ =
		// argmax of the posterior mean) need not be an evaluated point; its
		// best_value is then the noise-free f(x̄), else the stored value.
		f, err := fn.Eval(rec.BestX)
		if err != nil {
			t.Fatal(err)
		}
		if rec.BestValue == nil {
			t.Fatalf("record %d: no best_value", i)
		}
		stored := false
		for _, tr := range trials[:rec.Evals] {
			if key(tr.X) == key(rec.BestX) && tr.Value == *rec.BestValue {
				stored = true
			}
		}
		if !stored && math.Abs(*rec.BestValue-f) > 1e-9 {
			t.Fatalf("record %d: best %v = %v is neither a stored evaluation nor f(x̄) = %v", i, rec.BestX, *rec.BestValue, f)
		}
		if rec.Regret == nil || *rec.Regret < 0 || math.Abs(*rec.Regret-(fn.Optimum-f)) > 1e-9 {
			t.Fatalf("record %d: regret %v, want f* − f(x̄) = %v", i, rec.Regret, fn.Optimum-f)
		}
		if rec.FitS <= 0 || rec.ProposeS <= 0 || rec.EvalS < 0 {
			t.Fatalf("record %d: timings %+v", i, rec)
		}
		// best_observed: the largest stored value so far, and where.
		best := trials[0]
		for _, tr := range trials[:rec.Evals] {
			if tr.Value > best.Value {
				best = tr
			}
		}
		if rec.BestObserved == nil || *rec.BestObserved != best.Value || key(rec.BestObservedX) != key(best.X) {
			t.Fatalf("record %d: best_observed %v at %v, want %v at %v", i, rec.BestObserved, rec.BestObservedX, best.Value, best.X)
		}
		// The stored record is the printed one.
		if string(its[rec.Iter].Record) == "" {
			t.Fatalf("iteration %d record not stored", rec.Iter)
		}
	}
}

// Without --json (stdout not a terminal): a summary table naming the
// parameters.
func TestRunSummary(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "2", "--batch", "2", "--init", "2", "--study", "g")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"study", "g (in tesbo.db)", "objective", "grid", "evaluations     6 complete, 0 failed, 2 BO iterations", "best observed   0 (max)", "recommendation  0", "recommended x   a = ", "b = "} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tesbo.db")); err != nil {
		t.Fatal("default --db tesbo.db not created")
	}
	// stderr is not a terminal, so no progress bar: one info line per
	// iteration shows progress instead.
	if n := strings.Count(r.stderr, `"message":"iteration"`); n != 2 {
		t.Fatalf("want 2 iteration log lines on stderr, got %d:\n%s", n, r.stderr)
	}
}

// --help states each default once: --init's depends on the objective, so
// it shows no "(default -1)" placeholder; --recommend says why auto does
// not refine every objective.
func TestRunHelp(t *testing.T) {
	r := cli(t, t.TempDir(), "run", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var initLine string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "--init ") {
			initLine = l
		}
	}
	if !strings.Contains(initLine, "default 2 for synthetic/*") || strings.Contains(initLine, "(default -") {
		t.Fatalf("--init help: %q", initLine)
	}
	for _, want := range []string{"--recommend", "the paper's x̄", "extra", "evaluation outside the budget"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("run --help lacks %q:\n%s", want, r.stdout)
		}
	}
}

// --recommend on an objective without a noise-free evaluation (bowl, f* =
// 0): auto and evaluated report evaluated points with their stored values
// and the observed regret; refine reports the paper's x̄, the maximizer of
// the posterior mean, which is then not an evaluated point, with the
// posterior mean as best_value and a null regret. The trials are the same
// in all three runs, and the mode is stored with the study.
func TestRecommendModes(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "r.db")
	type run struct {
		recs   []record
		trials []store.Trial
	}
	do := func(study string, extra ...string) run {
		args := append([]string{"run", "--objective", "bowl", "--acq", "ei", "--iters", "4", "--batch", "2", "--init", "3",
			"--seed", "2", "--db", "r.db", "--study", study, "--json", "--log-level", "error"}, extra...)
		r := cli(t, dir, args...)
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", study, r.code, r.stderr)
		}
		var out run
		for _, m := range parseRecords(t, r.stdout) {
			out.recs = append(out.recs, decode(t, m))
		}
		out.trials, _ = loadTrials(t, dbPath, study)
		if len(out.recs) != 4 {
			t.Fatalf("%s: %d records", study, len(out.recs))
		}
		return out
	}
	auto := do("auto")
	evaluated := do("evaluated", "--recommend", "evaluated")
	refine := do("refine", "--recommend", "refine")
	sameTrials(t, auto.trials, evaluated.trials)
	sameTrials(t, auto.trials, refine.trials)
	evaluatedAt := func(tr []store.Trial, rec record) *store.Trial {
		for i := range tr[:rec.Evals] {
			if key(tr[i].X) == key(rec.BestX) {
				return &tr[i]
			}
		}
		return nil
	}
	for _, r := range []run{auto, evaluated} {
		for i, rec := range r.recs {
			tr := evaluatedAt(r.trials, rec)
			if tr == nil || rec.BestValue == nil || *rec.BestValue != tr.Value {
				t.Fatalf("record %d: best %v = %v is not a stored evaluation", i, rec.BestX, rec.BestValue)
			}
			if rec.Regret == nil || *rec.Regret != 0-tr.Value {
				t.Fatalf("record %d: regret %v, want f* − f = %v", i, rec.Regret, -tr.Value)
			}
			if key(rec.BestX) != key(auto.recs[i].BestX) {
				t.Fatalf("record %d: evaluated and auto disagree: %v vs %v", i, rec.BestX, auto.recs[i].BestX)
			}
		}
	}
	unevaluated := 0
	for i, rec := range refine.recs {
		if evaluatedAt(refine.trials, rec) != nil {
			continue
		}
		unevaluated++
		if rec.BestValue == nil || math.IsNaN(*rec.BestValue) || *rec.BestValue > 0.5 || rec.Regret != nil {
			t.Fatalf("record %d: unevaluated x̄ %v with best_value %v regret %v; want the posterior mean and no regret", i, rec.BestX, rec.BestValue, rec.Regret)
		}
	}
	if unevaluated == 0 {
		t.Fatal("--recommend refine never left the evaluated points")
	}
	d, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	st, err := d.Study(context.Background(), "refine")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(st.Settings), `"recommend":"refine"`) {
		t.Fatalf("stored settings %s lack the recommendation mode", st.Settings)
	}
}

func TestDeterminism(t *testing.T) {
	dir := t.TempDir()
	for _, acq := range []string{"ei", "tes-ep"} {
		iters := "5"
		if acq == "tes-ep" {
			iters = "2"
		}
		for _, s := range []struct{ name, seed string }{{"a", "4"}, {"b", "4"}, {"c", "5"}} {
			r := cli(t, dir, "run", "--objective", "synthetic/hartmann3", "--acq", acq, "--iters", iters, "--batch", "2",
				"--seed", s.seed, "--db", "d.db", "--study", acq+s.name, "--json", "--log-level", "error")
			if r.code != 0 {
				t.Fatalf("%s %s: exit %d: %s", acq, s.name, r.code, r.stderr)
			}
		}
		a, _ := loadTrials(t, filepath.Join(dir, "d.db"), acq+"a")
		b, _ := loadTrials(t, filepath.Join(dir, "d.db"), acq+"b")
		c, _ := loadTrials(t, filepath.Join(dir, "d.db"), acq+"c")
		sameTrials(t, a, b)
		if key(a[0].X) == key(c[0].X) || key(a[len(a)-1].X) == key(c[len(c)-1].X) {
			t.Fatalf("%s: seeds 4 and 5 gave the same points", acq)
		}
	}
}

// proc is a running CLI with its stdout lines collected.
type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	err   error
	se    strings.Builder
}

func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TESBO_PLUGINS="+pluginsDir)
	p := &proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &p.se
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		br := bufio.NewReader(out)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				break // a partial last line (killed mid-write) is not a report
			}
			p.mu.Lock()
			p.lines = append(p.lines, strings.TrimSuffix(l, "\n"))
			p.mu.Unlock()
		}
		io.Copy(io.Discard, out)
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

func (p *proc) nLines() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}

func studyExists(dbPath, name string) bool {
	if _, err := os.Stat(dbPath); err != nil {
		return false
	}
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		return false
	}
	defer db.Close()
	_, err = db.Study(context.Background(), name)
	return err == nil
}

// Crash safety: SIGKILL the CLI at random points at least 20 times, resume
// each time; every evaluation a --json record reported is stored exactly
// once, the study completes its iterations, and the trials are exactly
// those of an uninterrupted run with the same seed.
func TestCrashResume(t *testing.T) {
	crashResume(t, "synthetic/branin", "ei", 2, 25, 20)
}

// The same for the default acquisition with batches, whose proposals
// depend on what it carries between iterations (the previous trusted
// maximizers) and on the warm-started GP in six dimensions.
func TestCrashResumeTES(t *testing.T) {
	crashResume(t, "synthetic/hartmann6", "tes-ep", 2, 12, 6)
}

// crashResume SIGKILLs a run of objective with acquisition acqName at
// random points wantKills times, resuming each time, and checks that
// every reported evaluation is stored once and that the trials equal an
// uninterrupted run's bit for bit. The budget starts at iters iterations
// and grows by 10 whenever the study finishes before enough kills.
func crashResume(t *testing.T, objective, acqName string, batch, iters, wantKills int) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "crash.db")
	const init = 3
	runArgs := func(study string) []string {
		return []string{"run", "--objective", objective, "--acq", acqName, "--iters", fmt.Sprint(iters),
			"--batch", fmt.Sprint(batch), "--init", fmt.Sprint(init), "--seed", "9", "--db", "crash.db", "--study", study,
			"--json", "--log-level", "error"}
	}
	rng := rand.New(rand.NewPCG(2026, 11))
	reported := map[string]float64{} // point → value, from records
	kills, finished := 0, false
	for attempt := 0; attempt < 300 && !finished; attempt++ {
		args := []string{"resume", "--db", "crash.db", "--study", "c", "--iters", fmt.Sprint(iters), "--json", "--log-level", "error"}
		if !studyExists(dbPath, "c") {
			args = runArgs("c")
		}
		p := start(t, dir, args...)
		if kills < wantKills {
			// Wait for 0–2 new records (or up to 3 s), then a random few ms,
			// so kills land during start-up, proposals, evaluations and
			// commits alike.
			want := rng.IntN(3)
			deadline := time.Now().Add(3 * time.Second)
			for p.nLines() < want && time.Now().Before(deadline) {
				select {
				case <-p.done:
				case <-time.After(2 * time.Millisecond):
				}
			}
			time.Sleep(time.Duration(rng.IntN(25)) * time.Millisecond)
			if p.cmd.Process.Signal(syscall.SIGKILL) == nil {
				<-p.done
				if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					kills++
				}
			}
		}
		<-p.done
		for _, l := range p.lines {
			m := parseRecords(t, l+"\n")
			rec := decode(t, m[0])
			for k, x := range rec.Batch {
				if rec.Values[k] == nil {
					t.Fatalf("reported failure in %s", l)
				}
				if v, dup := reported[key(x)]; dup && v != *rec.Values[k] {
					t.Fatalf("point %v reported with two values %v and %v", x, v, *rec.Values[k])
				}
				reported[key(x)] = *rec.Values[k]
			}
		}
		if p.cmd.ProcessState.Success() {
			if kills >= wantKills {
				finished = true
			} else {
				iters += 10
			}
		} else if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("%v exited with %v: %s", args, p.err, p.se.String())
		}
	}
	if !finished {
		t.Fatalf("study did not finish (%d kills)", kills)
	}
	t.Logf("%d kills, %d iterations, %d evaluations reported", kills, iters, len(reported))
	trials, its := loadTrials(t, dbPath, "c")
	if len(trials) != init+iters*batch {
		t.Fatalf("%d trials, want %d", len(trials), init+iters*batch)
	}
	count := map[string]int{}
	for _, tr := range trials {
		if tr.Status != store.Complete {
			t.Fatalf("trial not complete after the final resume: %+v", tr)
		}
		count[key(tr.X)]++
	}
	for x, v := range reported {
		if count[x] != 1 {
			t.Fatalf("reported point %s stored %d times", x, count[x])
		}
		for _, tr := range trials {
			if key(tr.X) == x && tr.Value != v {
				t.Fatalf("reported %s = %v, stored %v", x, v, tr.Value)
			}
		}
	}
	if len(its) != iters+1 || its[iters].Record == nil || trials[len(trials)-1].Iteration != iters {
		t.Fatalf("%d iteration rows, last record %s", len(its), its[len(its)-1].Record)
	}
	// Kills change nothing: an uninterrupted run with the same seed.
	r := cli(t, dir, runArgs("ref")...)
	if r.code != 0 {
		t.Fatalf("reference run: %s", r.stderr)
	}
	ref, _ := loadTrials(t, dbPath, "ref")
	sameTrials(t, ref, trials)
}

// SIGINT/SIGTERM: exit 128+signal with a resume hint; resume finishes.
func TestSignalResume(t *testing.T) {
	for _, sg := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sg.String(), func(t *testing.T) {
			dir := t.TempDir()
			p := start(t, dir, "run", "--objective", "synthetic/branin", "--acq", "ei", "--iters", "200",
				"--db", "s.db", "--study", "sig", "--json", "--log-level", "error")
			deadline := time.Now().Add(time.Minute)
			for p.nLines() < 2 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			p.cmd.Process.Signal(sg)
			select {
			case <-p.done:
			case <-time.After(30 * time.Second):
				p.cmd.Process.Kill()
				t.Fatal("no exit 30 s after the signal")
			}
			if code := p.cmd.ProcessState.ExitCode(); code != 128+int(sg) {
				t.Fatalf("exit %d, want %d; stderr %s", code, 128+int(sg), p.se.String())
			}
			if n := pluginProcesses(t); n != 0 {
				t.Fatalf("%d plugin processes outlived the host", n)
			}
			lines := errorLines(p.se.String())
			if len(lines) != 1 || !strings.Contains(lines[0], "tesbo-host resume --db s.db --study sig") {
				t.Fatalf("no resume hint: %q", lines)
			}
			// EI's iterations are quick: the run may be several past the
			// two records when the signal lands, so the new total counts
			// from what was stored (--iters is a total, not a count).
			_, its := loadTrials(t, filepath.Join(dir, "s.db"), "sig")
			total := fmt.Sprint(len(its) + 3)
			r := cli(t, dir, "resume", "--db", "s.db", "--study", "sig", "--iters", total, "--json", "--log-level", "error")
			if r.code != 0 {
				t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
			}
			trials, _ := loadTrials(t, filepath.Join(dir, "s.db"), "sig")
			n := 0
			for _, tr := range trials {
				if tr.Status == store.Complete {
					n++
				}
			}
			if n != len(trials) || n < 2+5 {
				t.Fatalf("%d of %d trials complete", n, len(trials))
			}
		})
	}
}

// A process killed after the last iteration's evaluations were stored but
// before its record leaves a complete study without that record: resume
// --json makes and prints it (it used to say "already complete" and leave
// the record missing).
func TestResumeMakesMissingLastRecord(t *testing.T) {
	dir := t.TempDir()
	if r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "2", "--study", "g", "--json"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	raw, err := sql.Open("sqlite", filepath.Join(dir, "tesbo.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE iterations SET record=NULL WHERE iteration=2`); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	r := cli(t, dir, "resume", "--db", "tesbo.db", "--study", "g", "--json")
	if r.code != 0 || strings.Contains(r.stderr, "already complete") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if recs := parseRecords(t, r.stdout); len(recs) != 1 || decode(t, recs[0]).Iter != 2 {
		t.Fatalf("resume printed %q, want iteration 2's record", r.stdout)
	}
	_, its := loadTrials(t, filepath.Join(dir, "tesbo.db"), "g")
	if len(its) != 3 || its[2].Record == nil {
		t.Fatalf("iteration 2's record is still missing after resume")
	}
}

func TestResumeCompleteStudy(t *testing.T) {
	dir := t.TempDir()
	if r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--study", "g", "--json"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := cli(t, dir, "resume", "--db", "tesbo.db", "--study", "g", "--json")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "already complete") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = cli(t, dir, "resume", "--db", "tesbo.db", "--study", "g", "--iters", "3", "--json")
	if r.code != 0 || len(parseRecords(t, r.stdout)) != 2 {
		t.Fatalf("extending: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
}

// Resuming a complete study says that --iters is the new total: a smaller
// one is refused (exit 2, nothing written), and the summary of a study with
// nothing left to do shows its recommendation and the time it took, not
// "-" and 0s.
func TestResumeCompleteStudyMessages(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, "run", "--objective", "synthetic/branin", "--acq", "random", "--iters", "4", "--study", "b", "--json")
	if r.code != 0 {
		t.Fatal(r.stderr)
	}
	recs := parseRecords(t, r.stdout)
	last := decode(t, recs[len(recs)-1])
	before := snapshot(t, dir)
	r = cli(t, dir, "resume", "--db", "tesbo.db", "--study", "b", "--iters", "3")
	checkUsageError(t, r, []string{"--iters is the new total", "already run 4, more than 3", "pass --iters 7 to run 3 more"})
	sameSnapshot(t, before, snapshot(t, dir))

	r = cli(t, dir, "resume", "--db", "tesbo.db", "--study", "b")
	if r.code != 0 || !strings.Contains(r.stderr, "already complete: it has run all 4 BO iterations") || !strings.Contains(r.stderr, "--iters 14 runs 10 more") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	for _, want := range []string{"recommendation  " + fmtPtr(last.BestValue) + " ", "fitting, proposing and evaluating over the study's runs"} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("summary lacks %q:\n%s", want, r.stdout)
		}
	}
}

func TestPluginsCommand(t *testing.T) {
	r := cli(t, t.TempDir(), "plugins")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"synthetic/branin", "objective", "executable", "x1 float [0, 1]; x2 float [0, 1]; f* = -0.397887",
		"grid", "script", "a int [0, 2]; b int [0, 2]",
		"broken", "ERROR:", "broken.go:2",
		"built-in acquisitions:", "tes-ep", "ei",
		"synthetic=",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("plugins output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// Every bad input: exit 2, one error line, nothing on stdout, nothing
// written.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	// Databases to refuse.
	os.WriteFile(filepath.Join(dir, "text.db"), []byte("not a database\n"), 0o644)
	newer := filepath.Join(dir, "newer.db")
	corrupt := filepath.Join(dir, "corrupt.db")
	good := filepath.Join(dir, "good.db")
	for _, p := range []string{newer, corrupt, good} {
		d, err := store.Open(p, store.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	if r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--db", "good.db", "--study", "taken"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	rawExec(t, newer, `UPDATE tesbo_meta SET value='99' WHERE key='schema_version'`)
	// A database of the older schema 1 (no iterations table) holding study
	// "taken": refusing a command must not migrate it.
	older := filepath.Join(dir, "older.db")
	if d, err := store.Open(older, store.Options{Create: true}); err != nil {
		t.Fatal(err)
	} else {
		d.Close()
	}
	rawExec(t, older, `DROP TABLE workers; DROP TABLE trial_attempts; DROP INDEX trials_queue; ALTER TABLE trials DROP COLUMN worker; ALTER TABLE trials DROP COLUMN holder; ALTER TABLE trials DROP COLUMN lease_expires; DROP TABLE iterations; UPDATE tesbo_meta SET value='1' WHERE key='schema_version';
		INSERT INTO studies(name, objective, acquisition, seed, space, settings, created_at, updated_at)
		VALUES ('taken', 'grid', 'random', 1, '[]', '{}', 0, 0)`)
	// A directory where the database should be: unreadable as a database
	// whoever runs the test (root included).
	if err := os.Mkdir(filepath.Join(dir, "dbdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(corrupt)
	for i := 4096; i < len(b); i++ {
		b[i] = 0x5A
	}
	os.WriteFile(corrupt, b, 0o644)

	branin := []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "new.db"}
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown objective", []string{"run", "--objective", "nope", "--db", "new.db"}, []string{"unknown objective \"nope\"", "synthetic/branin", "grid"}},
		{"unknown acquisition", []string{"run", "--objective", "synthetic/branin", "--acq", "nope", "--db", "new.db"}, []string{"unknown acquisition \"nope\"", "tes-ep", "ei", "random"}},
		{"missing objective", []string{"run", "--db", "new.db"}, []string{"objective"}},
		{"batch 0", append(branin, "--batch", "0"), []string{"--batch"}},
		{"batch not a number", append(branin, "--batch", "two"), []string{"batch"}},
		{"batch auto with ei", append(branin, "--batch", "auto"), []string{"acquisition \"ei\" cannot size its batches", "tes"}},
		{"batch-max 0", []string{"run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-max", "0", "--db", "new.db"}, []string{"--batch-max 0"}},
		{"batch-max too large", []string{"run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-max", "101", "--db", "new.db"}, []string{"batch 101 exceeds 100"}},
		{"negative batch gain", []string{"run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-min-gain", "-1", "--db", "new.db"}, []string{"--batch-min-gain"}},
		{"negative iters", append(branin, "--iters", "-1"), []string{"--iters"}},
		{"zero iters", append(branin, "--iters", "0"), []string{"--iters 0", "≥ 1"}},
		{"negative init", append(branin, "--init", "-3"), []string{"--init"}},
		{"negative trusted", append(branin, "--trusted", "-1"), []string{"--trusted"}},
		{"negative parallel", append(branin, "--parallel", "-2"), []string{"--parallel"}},
		{"negative noise", append(branin, "--noise-var", "-1"), []string{"--noise-var"}},
		{"NaN noise", append(branin, "--noise-var", "NaN"), []string{"--noise-var"}},
		{"negative seed", append(branin, "--seed", "-1"), []string{"seed"}},
		{"param without =", append(branin, "--param", "foo"), []string{"--param", "key=value"}},
		{"reserved param", append(branin, "--param", "seed=3"), []string{"reserved"}},
		{"duplicate param", append(branin, "--param", "a=1", "--param", "a=2"), []string{"twice"}},
		{"param for a script", []string{"run", "--objective", "grid", "--acq", "ei", "--db", "new.db", "--param", "a=1"}, []string{"takes no parameters"}},
		{"negative timeout", append(branin, "--eval-timeout", "-1s"), []string{"--eval-timeout"}},
		{"bad timeout", append(branin, "--eval-timeout", "soon"), []string{"eval-timeout"}},
		{"negative retries", append(branin, "--retries", "-1"), []string{"--retries"}},
		{"bad log level", append(branin, "--log-level", "loud"), []string{"--log-level"}},
		{"unknown flag", append(branin, "--bogus"), []string{"unknown flag"}},
		{"extra argument", append(branin, "extra"), []string{"unknown command"}},
		{"bad checksum flag", append(branin, "--plugin-sha256", "synthetic"), []string{"NAME=HEX"}},
		{"checksum mismatch", append(branin, "--plugin-sha256", "synthetic="+strings.Repeat("0", 64)), []string{"checksum"}},
		{"checksum mismatch by objective name", append(branin, "--plugin-sha256", "synthetic/branin="+strings.Repeat("0", 64)), []string{"--plugin-sha256", "refusing", "synthetic/branin"}},
		{"checksum for an unknown plugin", append(branin, "--plugin-sha256", "nope="+strings.Repeat("0", 64)), []string{"--plugin-sha256", "no plugin", "\"nope\""}},
		{"checksum not hex", append(branin, "--plugin-sha256", "synthetic=xyz"), []string{"64 hex digits"}},
		{"missing plugins dir", append(branin, "--plugins", "/nonexistent/plugins"), []string{"plugins directory"}},
		{"batch larger than integer space", []string{"run", "--objective", "grid", "--acq", "random", "--batch", "10", "--db", "new.db"}, []string{"larger than the 9 distinct points"}},
		{"init larger than integer space", []string{"run", "--objective", "grid", "--acq", "random", "--init", "10", "--db", "new.db"}, []string{"larger than the 9 distinct points"}},
		{"db not sqlite", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "text.db"}, []string{"not a tesbo study database"}},
		{"db newer schema", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "newer.db"}, []string{"newer tesbo"}},
		{"db corrupt", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "corrupt.db"}, []string{"corrupt"}},
		{"db in missing directory", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "no/such/dir.db"}, []string{"does not exist"}},
		{"db is a directory", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "dbdir"}, []string{"is a directory"}},
		{"resume db is a directory", []string{"resume", "--db", "dbdir", "--study", "x"}, []string{"is a directory"}},
		{"bad recommend", append(branin, "--recommend", "best"), []string{"--recommend", "auto, evaluated or refine"}},
		{"bad model", append(branin, "--model", "sparse"), []string{"--model \"sparse\"", "auto, exact or local"}},
		{"huge local model", append(branin, "--local-points", "100000"), []string{"--local-points 100000", "[0, 4000]"}},
		// Sizes whose memory or time cannot be met (host's Max* limits).
		{"huge batch", []string{"run", "--objective", "synthetic/branin", "--acq", "random", "--db", "new.db", "--batch", "1000000000"}, []string{"batch 1000000000 exceeds 1000", "jointly"}},
		{"huge tes batch", []string{"run", "--objective", "synthetic/branin", "--acq", "tes-ep", "--db", "new.db", "--batch", "1000"}, []string{"batch 1000 exceeds 100, the limit for tes-ep"}},
		{"huge ei batch", append(branin, "--batch", "100000"), []string{"batch 100000 exceeds 1000"}},
		{"huge init", append(branin, "--init", "1000000000"), []string{"initial design of 1000000000 points exceeds the limit of 5000"}},
		{"huge trusted", append(branin, "--trusted", "1000000000"), []string{"1000000000 trusted maximizers exceed the limit of 100", "orthant"}},
		{"huge iters", append(branin, "--iters", "1000000000"), []string{"exceeds the limit of 5000 trials", "GP"}},
		{"huge budget", append(branin, "--iters", "100", "--batch", "100"), []string{"exceeds the limit of 5000 trials"}},
		{"huge parallel", append(branin, "--parallel", "1000000000"), []string{"1000000000 concurrent evaluations exceed the limit of 1000"}},
		{"huge retries", append(branin, "--retries", "1000000000"), []string{"1000000000 retries exceed the limit of 20"}},
		{"too many parameters", []string{"run", "--objective", "wide", "--acq", "tes-ep", "--db", "new.db"}, []string{"10000 parameters, more than the limit of 1000"}},
		{"resume with huge iters", []string{"resume", "--db", "good.db", "--study", "taken", "--iters", "1000000000"}, []string{"exceeds the limit of 5000 trials"}},
		{"study exists in an older db", []string{"run", "--objective", "grid", "--acq", "random", "--db", "older.db", "--study", "taken"}, []string{"already exists"}},
		{"resume missing study in an older db", []string{"resume", "--db", "older.db", "--study", "x"}, []string{"\"x\" not found", "taken"}},
		{"resume older db without plugins", []string{"resume", "--db", "older.db", "--study", "taken", "--plugins", "/nonexistent/plugins"}, []string{"plugins directory"}},
		{"study exists", []string{"run", "--objective", "grid", "--acq", "random", "--db", "good.db", "--study", "taken"}, []string{"already exists", "tesbo-host resume --db good.db --study taken"}},
		{"resume missing db", []string{"resume", "--db", "missing.db", "--study", "x"}, []string{"no such file"}},
		{"resume missing study", []string{"resume", "--db", "good.db", "--study", "x"}, []string{"\"x\" not found", "taken"}},
		{"resume corrupt db", []string{"resume", "--db", "corrupt.db", "--study", "x"}, []string{"corrupt"}},
		{"resume without study", []string{"resume", "--db", "good.db"}, []string{"study"}},
		{"unknown command", []string{"frobnicate"}, []string{"unknown command"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir)
			r := cli(t, dir, c.args...)
			checkUsageError(t, r, c.want)
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
	// The older database was left at schema 1 by every refusal above; a
	// study that is accepted migrates it, keeping its data.
	t.Run("older db migrated when accepted", func(t *testing.T) {
		if v := schemaVersion(t, older); v != "1" {
			t.Fatalf("schema version %s after the refusals, want 1", v)
		}
		r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--db", "older.db", "--study", "new", "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		if v := schemaVersion(t, older); v != fmt.Sprint(store.SchemaVersion) {
			t.Fatalf("schema version %s after a run, want %d", v, store.SchemaVersion)
		}
		d, err := store.Open(older, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		if names, err := d.StudyNames(context.Background()); err != nil || strings.Join(names, ",") != "taken,new" {
			t.Fatalf("studies after migration: %v %v", names, err)
		}
	})
	// A database locked by another process. The snapshots are taken with
	// no lock held: reading the file from this process would drop the
	// holder's POSIX locks (they belong to the process, and closing any
	// descriptor of the file releases them).
	t.Run("db locked", func(t *testing.T) {
		before := snapshot(t, dir)
		r := func() result {
			holder, err := sql.Open("sqlite", good)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			conn, err := holder.Conn(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
				t.Fatal(err)
			}
			defer conn.ExecContext(context.Background(), "ROLLBACK")
			return cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--db", "good.db", "--study", "new")
		}()
		lines := errorLines(r.stderr)
		if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "locked") {
			t.Fatalf("exit %d, stderr %q", r.code, lines)
		}
		if r.stdout != "" {
			t.Fatalf("stdout: %q", r.stdout)
		}
		sameSnapshot(t, before, snapshot(t, dir))
		if studyExists(good, "new") {
			t.Fatal("the refused study was stored")
		}
	})
}

// schemaVersion reads a database's schema version without opening it
// through store (which could migrate it).
func schemaVersion(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(`SELECT value FROM tesbo_meta WHERE key='schema_version'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func rawExec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}

// pluginProcesses counts running processes started from the test's plugins
// directory (waiting up to 2 s for exiting ones).
func pluginProcesses(t *testing.T) int {
	t.Helper()
	n := 0
	for range 40 {
		n = 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && strings.Contains(string(b), pluginsDir) {
				st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
				if !strings.Contains(string(st), ") Z ") { // zombies are exited
					n++
				}
			}
		}
		if n == 0 {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// Two runs started at once with the default --study name into the same
// database both succeed, as two studies (the names used to be the
// objective and the second, so the later one was refused).
func TestDefaultStudyNamesDiffer(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--json")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, r.code, r.stderr)
		}
	}
	d, err := store.Open(filepath.Join(dir, "tesbo.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if names, err := d.StudyNames(context.Background()); err != nil || len(names) != 2 || names[0] == names[1] {
		t.Fatalf("studies %v (%v), want two", names, err)
	}
}

// The summary names the objective as the command line did, not by the
// plugin's own Info.Name.
func TestSummaryObjectiveName(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(gridScript, `Name: "grid"`, `Name: "inner name"`, 1)
	if err := os.WriteFile(filepath.Join(plugins, "outer.go"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	r := cli(t, dir, "run", "--plugins", plugins, "--objective", "outer", "--acq", "random", "--iters", "1", "--study", "o")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "objective       outer\n") {
		t.Fatalf("summary does not name the objective outer:\n%s", r.stdout)
	}
}

// --batch auto: records and trials follow the sizes TES chose (between 1
// and --batch-max), and the same seed gives the same trials.
func TestRunBatchAuto(t *testing.T) {
	dir := t.TempDir()
	run := func(study string) []store.Trial {
		r := cli(t, dir, "run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-max", "4", "--iters", "3",
			"--init", "8", "--seed", "2", "--db", "a.db", "--study", study, "--json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		recs := parseRecords(t, r.stdout)
		if len(recs) != 3 {
			t.Fatalf("%d records, want 3", len(recs))
		}
		total := 8
		for _, m := range recs {
			rec := decode(t, m)
			if n := len(rec.Batch); n < 1 || n > 4 {
				t.Fatalf("iteration %d: batch of %d", rec.Iter, n)
			}
			total += len(rec.Batch)
		}
		trials, _ := loadTrials(t, filepath.Join(dir, "a.db"), study)
		if len(trials) != total {
			t.Fatalf("%d trials stored, records say %d", len(trials), total)
		}
		return trials
	}
	a, b := run("a"), run("b")
	if len(a) != len(b) {
		t.Fatalf("same seed: %d and %d trials", len(a), len(b))
	}
	for i := range a {
		if !slices.Equal(a[i].U, b[i].U) {
			t.Fatalf("same seed, trial %d differs: %v vs %v", i, a[i].U, b[i].U)
		}
	}
}

// Run parameters that shape the objective reach the study: the synthetic
// plugin's dim gives a study of that dimension (it kept the default 2 and
// every evaluation failed), a BBOB instance its own f* (the regret was
// measured against instance 1's), and resume configures the objective
// before checking that it matches the study.
func TestRunParamsShapeTheObjective(t *testing.T) {
	dir := t.TempDir()
	run := func(args ...string) result {
		t.Helper()
		r := cli(t, dir, append([]string{"run", "--acq", "random", "--iters", "1", "--log-level", "error"}, args...)...)
		if r.code != 0 {
			t.Fatalf("run %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r
	}
	run("--objective", "synthetic/ackley", "--param", "dim=3", "--study", "a3")
	if r := cli(t, dir, "resume", "--db", "tesbo.db", "--study", "a3", "--iters", "2", "--log-level", "error"); r.code != 0 {
		t.Fatalf("resume: exit %d: %s", r.code, r.stderr)
	}
	ts := trialsJSON(t, dir, "--db", "tesbo.db", "--study", "a3")
	if len(ts) != 4 {
		t.Fatalf("%d trials, want 2 initial + 2 iterations", len(ts))
	}
	for _, jt := range ts {
		if jt.State != "complete" || len(jt.Params) != 3 {
			t.Fatalf("trial %+v: want complete, with 3 parameters", jt)
		}
	}
	r := run("--objective", "synthetic/bbob-f1", "--param", "instance=3", "--study", "b3")
	if !strings.Contains(r.stdout, "known optimum   1.52\n") {
		t.Fatalf("bbob-f1 instance 3 has f* = 1.52 (instance 1: -15.51); summary:\n%s", r.stdout)
	}
}
