package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// updateReplay rewrites testdata/replay from the code under test:
//
//	go test -run TestReplay ./cmd/tesbo-host/ -update-replay
//
// Only do that when a change of trials is intended and explained in the
// commit; a refactor must leave these files as they are.
var updateReplay = flag.Bool("update-replay", false, "record TestReplay's golden files from this code")

// replayAcqs are the built-in acquisitions (tesbo-host plugins lists them).
var replayAcqs = []string{"tes", "tes-ep", "tes-sp", "ei", "pi", "ucb", "mes", "pes", "qei", "qei-cl", "bucb", "lp-ei", "ts", "random"}

// replayCase is one fixed study: the arguments of 'run' (without --db,
// --study and --json) and the plugins directory it needs ("" for the
// shared test plugins).
type replayCase struct {
	name    string
	args    []string
	plugins string
}

func replayCases(t *testing.T) []replayCase {
	var cs []replayCase
	for _, a := range replayAcqs {
		cs = append(cs,
			replayCase{name: a + "-b1", args: []string{"--objective", "synthetic/branin", "--acq", a, "--batch", "1", "--iters", "3", "--seed", "5"}},
			replayCase{name: a + "-b4", args: []string{"--objective", "synthetic/branin", "--acq", a, "--batch", "4", "--iters", "2", "--seed", "5"}})
	}
	mixed := t.TempDir()
	writeFile(t, filepath.Join(mixed, "mixed.go"), mixedScript)
	cs = append(cs,
		replayCase{name: "categorical-tes-b2", plugins: mixed, args: []string{"--objective", "mixed", "--acq", "tes", "--batch", "2", "--iters", "3", "--init", "4", "--seed", "3"}},
		replayCase{name: "categorical-ei-b1", plugins: mixed, args: []string{"--objective", "mixed", "--acq", "ei", "--batch", "1", "--iters", "3", "--init", "4", "--seed", "3"}},
		replayCase{name: "failures-tes-b4", args: []string{"--objective", "user/fail2", "--acq", "tes", "--batch", "4", "--iters", "3", "--retries", "1", "--seed", "2"}},
		replayCase{name: "autobatch-tes", args: []string{"--objective", "synthetic/branin", "--acq", "tes", "--batch", "auto", "--batch-max", "4", "--iters", "2", "--seed", "4"}},
		replayCase{name: "local-tes-b2", args: []string{"--objective", "synthetic/hartmann3", "--acq", "tes", "--batch", "2", "--iters", "2", "--model", "local", "--local-points", "6", "--init", "6", "--seed", "6"}},
		replayCase{name: "integer-tes-b2", args: []string{"--objective", "grid", "--acq", "tes", "--batch", "2", "--iters", "2", "--seed", "1"}},
	)
	return cs
}

// TestReplay runs a fixed set of studies — every acquisition at batch 1 and
// 4, a categorical space, failures with retries, auto batches, the local
// model, an integer space; a kill -9 and resume; PostgreSQL workers — and
// compares their trials and --json records bit for bit with those recorded
// in testdata/replay before issue 30's refactor. Timings, timestamps and
// worker names are left out; everything else a user sees of a trial is in.
func TestReplay(t *testing.T) {
	for _, c := range replayCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			args := append([]string{"run", "--db", "r.db", "--study", "s", "--json", "--log-level", "error"}, c.args...)
			if c.plugins != "" {
				args = append(args, "--plugins", c.plugins)
			}
			r := cli(t, dir, args...)
			got := replayHeader(c.args, r)
			if r.code == 0 {
				got += canonLines(t, "record", r.stdout)
				got += studyTrials(t, dir, "r.db", "s", true)
			}
			checkGolden(t, c.name, got)
		})
	}
	t.Run("kill-resume", testReplayKillResume)
	t.Run("postgres", testReplayPostgres)
}

// killResumeArgs is the study that TestReplay kills and resumes; its
// golden file is the uninterrupted run.
var killResumeArgs = []string{"--objective", "synthetic/hartmann3", "--acq", "tes", "--batch", "4", "--iters", "3", "--seed", "7"}

// A study killed (SIGKILL) after its first BO iteration and resumed has the
// trials of the uninterrupted run (attempts aside: the trials in flight at
// the kill are attempted again).
func testReplayKillResume(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := []string{"--db", "r.db", "--study", "s", "--json", "--log-level", "error"}
	if *updateReplay {
		r := cli(t, dir, append(append([]string{"run"}, base...), killResumeArgs...)...)
		checkGolden(t, "kill-resume", replayHeader(killResumeArgs, r)+studyTrials(t, dir, "r.db", "s", false))
		return
	}
	killAfterLines(t, dir, 1, append(append([]string{"run"}, base...), killResumeArgs...)...)
	r := cli(t, dir, append([]string{"resume"}, base...)...)
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	r.stdout = "" // the header's exit status is the resumed process's
	checkGolden(t, "kill-resume", replayHeader(killResumeArgs, r)+studyTrials(t, dir, "r.db", "s", false))
}

// killAfterLines starts the binary, waits for n lines on its stdout, and
// kills it with SIGKILL.
func killAfterLines(t *testing.T, dir string, n int, args ...string) {
	t.Helper()
	p := start(t, dir, args...)
	deadline := time.Now().Add(2 * time.Minute)
	for p.nLines() < n && time.Now().Before(deadline) {
		select {
		case <-p.done:
			t.Fatalf("%v ended before %d lines: %v\n%s", args, n, p.err, p.se.String())
		case <-time.After(2 * time.Millisecond):
		}
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// pgArgs is the study PostgreSQL workers share in TestReplay: TES with one
// point at a time and one evaluation slot per worker, so the order of
// proposals does not depend on timing.
var pgArgs = []string{"--objective", "synthetic/branin", "--acq", "tes", "--batch", "1", "--parallel", "1", "--iters", "4", "--seed", "8"}

// On PostgreSQL: a study run by one process ('run' joins as a worker) has
// the recorded trials; so does one whose first worker is killed (SIGKILL)
// and that a second worker finishes; and two workers running at once
// evaluate every trial of the budget exactly once, starting from the
// recorded initial design.
func testReplayPostgres(t *testing.T) {
	pg := testenv.StartPostgres(t)
	base := func(url string) []string {
		return []string{"--db", url, "--study", "s", "--json", "--log-level", "error"}
	}
	t.Run("one-worker", func(t *testing.T) {
		dir, url := t.TempDir(), pg.NewDatabase(t)
		r := cli(t, dir, append(append([]string{"run"}, base(url)...), pgArgs...)...)
		r.stdout = "" // records of worker mode come from whichever worker proposes
		checkGolden(t, "postgres", replayHeader(pgArgs, r)+studyTrials(t, dir, url, "s", false))
	})
	t.Run("kill-then-worker", func(t *testing.T) {
		if *updateReplay {
			t.Skip("compared with one-worker's file")
		}
		dir, url := t.TempDir(), pg.NewDatabase(t)
		killAfterLines(t, dir, 2, append(append([]string{"run"}, base(url)...), pgArgs...)...)
		r := cli(t, dir, "worker", "--db", url, "--study", "s", "--log-level", "error")
		if r.code != 0 {
			t.Fatalf("worker: exit %d\n%s", r.code, r.stderr)
		}
		r.stdout = ""
		checkGolden(t, "postgres", replayHeader(pgArgs, r)+studyTrials(t, dir, url, "s", false))
	})
	t.Run("two-workers", func(t *testing.T) {
		dir, url := t.TempDir(), pg.NewDatabase(t)
		args := []string{"--objective", "synthetic/branin", "--acq", "qei", "--batch", "2", "--parallel", "1", "--iters", "3", "--seed", "8"}
		p := start(t, dir, append(append([]string{"run"}, base(url)...), args...)...)
		waitStudy(t, url, "s") // the worker must find the study run creates
		r := cli(t, dir, "worker", "--db", url, "--study", "s", "--log-level", "error")
		<-p.done
		if r.code != 0 || p.err != nil {
			t.Fatalf("worker: exit %d (%s); run: %v (%s)", r.code, r.stderr, p.err, p.se.String())
		}
		checkTwoWorkers(t, dir, url)
	})
}

// checkTwoWorkers checks the study of two concurrent workers: 2 + 3 × 2
// trials, each complete after one attempt, the first two the recorded
// initial design.
func checkTwoWorkers(t *testing.T, dir, url string) {
	lines := strings.Split(strings.TrimSpace(studyTrials(t, dir, url, "s", true)), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d trials, want 8:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if !strings.Contains(l, `"state":"complete"`) || !strings.Contains(l, `"attempts":1`) {
			t.Errorf("trial not complete after exactly one attempt: %s", l)
		}
	}
	want := "run exit 0\n" + strings.Join(lines[:2], "\n") + "\n"
	checkGolden(t, "postgres-two-workers-design", want)
}

// replayHeader is the first lines of a golden file: the study's arguments
// and how 'run' ended (with its error lines when it refused).
func replayHeader(args []string, r result) string {
	h := fmt.Sprintf("# run %s\nrun exit %d\n", strings.Join(args, " "), r.code)
	if r.code != 0 {
		for _, l := range errorLines(r.stderr) {
			h += "error " + l + "\n"
		}
	}
	return h
}

// studyTrials lists the study's trials with 'tesbo-host trials --format
// json', in canonical form; without attempts, the attempts field is left
// out too.
func studyTrials(t *testing.T, dir, db, study string, attempts bool) string {
	t.Helper()
	r := cli(t, dir, "trials", "--db", db, "--study", study, "--format", "json")
	if r.code != 0 {
		t.Fatalf("trials: exit %d\n%s", r.code, r.stderr)
	}
	drop := []string{"started", "finished", "worker"}
	if !attempts {
		drop = append(drop, "attempts")
	}
	return canonLines(t, "trial", r.stdout, drop...)
}

// canonLines rewrites JSON lines with sorted keys, numbers exactly as
// printed (so floats compare bit for bit), without timing fields (names
// ending in _s) and without the drop fields, each prefixed with kind.
func canonLines(t *testing.T, kind, out string, drop ...string) string {
	t.Helper()
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatalf("%s line %q: %v", kind, l, err)
		}
		for k := range m {
			if strings.HasSuffix(k, "_s") || slices.Contains(drop, k) {
				delete(m, k)
			}
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s\n", kind, enc)
	}
	return b.String()
}

// checkGolden compares got with testdata/replay/NAME.txt, or writes it
// with -update-replay.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "replay", name+".txt")
	if *updateReplay {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with -update-replay)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the recorded study:\n%s", name, firstDiff(string(want), got))
	}
}

// firstDiff shows the first line where want and got differ.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d\nrecorded: %s\n     now: %s", i+1, a, b)
		}
	}
	return "(same lines, different bytes)"
}
