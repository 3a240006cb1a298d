package main

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tesbo/tesbo/store"
)

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

// A signal while the objective's plugin is starting (here one that never
// serves) is an interruption, exit 128 + signal with the "interrupted"
// line, not exit 2 with the start error the cancellation caused.
func TestSignalDuringPluginStart(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plugins, "hang"), []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := start(t, dir, "run", "--plugins", plugins, "--objective", "hang", "--db", "s.db", "--iters", "2")
	time.Sleep(500 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGTERM)
	waitDone(t, p, 30*time.Second, "no exit within 30 s of SIGTERM")
	code := p.cmd.ProcessState.ExitCode()
	if code != 143 || !strings.Contains(p.se.String(), "interrupted (received terminated) while starting objective hang") {
		t.Fatalf("exit %d, stderr %q; want 143 and the interrupted line", code, p.se.String())
	}
}

// A run paused (SIGSTOP, as Ctrl-Z) past its evaluations' limit and
// continued re-runs the evaluations in flight rather than failing them as
// timed out: it ends with exactly the trials of an uninterrupted run.
func TestPausedRunKeepsItsTrials(t *testing.T) {
	dir, plugins := workerSetup(t) // nap: 40 ms evaluations
	args := func(db string) []string {
		return []string{"run", "--plugins", plugins, "--objective", "nap", "--acq", "random", "--init", "4", "--iters", "60",
			"--batch", "2", "--eval-timeout", "1s", "--db", db, "--study", "p", "--log-level", "error"}
	}
	if r := cli(t, dir, args("ref.db")...); r.code != 0 {
		t.Fatalf("uninterrupted run: exit %d: %s", r.code, r.stderr)
	}
	p := start(t, dir, args("paused.db")...)
	time.Sleep(700 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGSTOP)
	select {
	case <-p.done:
		t.Fatal("the run ended before it was paused: nothing was tested")
	default:
	}
	time.Sleep(2500 * time.Millisecond)
	p.cmd.Process.Signal(syscall.SIGCONT)
	waitDone(t, p, 2*time.Minute, "the paused run did not finish")
	if p.err != nil {
		t.Fatalf("paused run: %v: %s", p.err, p.se.String())
	}
	want := trialsCSV(t, dir, "ref.db")
	if got := trialsCSV(t, dir, "paused.db"); got != want || strings.Contains(got, "failed") {
		t.Fatalf("paused run's trials differ from the uninterrupted run's:\n%s\nwant\n%s", got, want)
	}
}

// trialsCSV lists study p of db with 'trials --format csv': its id,
// state, x and value columns (the others hold times).
func trialsCSV(t *testing.T, dir, db string) string {
	t.Helper()
	r := cli(t, dir, "trials", "--db", db, "--study", "p", "--format", "csv")
	if r.code != 0 {
		t.Fatalf("trials: exit %d: %s", r.code, r.stderr)
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Split(l, ",")
		b.WriteString(strings.Join(f[:min(4, len(f))], ",") + "\n")
	}
	return b.String()
}
