package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/bench"

	"github.com/tesbo/tesbo/internal/testenv"
)

// gpSampleDraw3Optimum is f* of synthetic/gpsample with sample_seed=3, as
// pinned by problems/testfunc's TestGPSamplePinned.
const gpSampleDraw3Optimum = 4.1708540998722885

// The CI smoke configuration through the built binary: two 2-d problems,
// cheap acquisitions plus TES_ep, |B| = 1 and 2, with every flag the bench
// wires into the suite set away from its default. Checks the exit status,
// that the outputs appear and parse, that the flags reached the stored
// studies, one progress line per run on stderr, and that the same command
// again resumes: every run skipped, the same runs.csv, nothing evaluated.
func TestBenchCLISmoke(t *testing.T) {
	dir := t.TempDir()
	const iters = 3
	problems := []string{"synthetic/branin", "synthetic/gpsample"}
	acqs := []string{"ei", "random", "tes-ep"}
	batches := []int{1, 2}
	runs := benchRuns(problems, acqs, batches, 1)
	args := []string{"bench", "--problems", strings.Join(problems, ","), "--acqs", strings.Join(acqs, ","),
		"--batch", "1,2", "--seeds", "1", "--iters", fmt.Sprint(iters),
		"--init", "0", "--noise-var", "0", "--trusted", "3", "--jobs", "2", "--param", "sample_seed=3",
		"--out", "out"}
	t0 := time.Now()
	r := cli(t, dir, args...)
	first := time.Since(t0)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if lines := errorLines(r.stderr); len(lines) != 0 {
		t.Fatalf("stderr carries non-log lines: %q", lines)
	}
	if want := fmt.Sprintf("%d runs: %d done, 0 already complete, 0 failed", len(runs), len(runs)); !strings.Contains(r.stdout, want) {
		t.Fatalf("stdout lacks %q:\n%s", want, r.stdout)
	}
	checkProgress(t, r.stderr, runs, "done", iters)

	out := filepath.Join(dir, "out")
	checkSmokeRunsCSV(t, out, runs, iters)
	checkSmokeSummary(t, out, problems, acqs, batches, len(runs))

	// The flags reached the stored studies.
	dbPath := filepath.Join(out, bench.DBFile)
	trials := checkSmokeStored(t, dbPath, runs, iters)

	// Resume: the same command finds every run complete and evaluates
	// nothing; runs.csv is rebuilt from the database unchanged.
	csvBefore, _ := os.ReadFile(filepath.Join(out, bench.RunsFile))
	t0 = time.Now()
	r = cli(t, dir, args...)
	again := time.Since(t0)
	t.Logf("first invocation %v, resumed %v", first.Round(time.Millisecond), again.Round(time.Millisecond))
	if r.code != 0 {
		t.Fatalf("rerun: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if want := fmt.Sprintf("%d runs: 0 done, %d already complete, 0 failed", len(runs), len(runs)); !strings.Contains(r.stdout, want) {
		t.Fatalf("rerun stdout lacks %q:\n%s", want, r.stdout)
	}
	checkProgress(t, r.stderr, runs, "skipped", iters)
	csvAfter, _ := os.ReadFile(filepath.Join(out, bench.RunsFile))
	if string(csvAfter) != string(csvBefore) {
		t.Errorf("runs.csv changed on a rerun with nothing to do")
	}
	readRunsCSV(t, filepath.Join(out, bench.RunsFile)) // still no duplicate rows
	for _, run := range runs {
		if tr, _ := loadTrials(t, dbPath, run.studyName()); len(tr) != trials[run] {
			t.Errorf("%s: %d trials after the rerun, %d before", run.studyName(), len(tr), trials[run])
		}
	}
	var hist bench.History
	if b, err := os.ReadFile(filepath.Join(out, bench.HistoryFile)); err != nil || json.Unmarshal(b, &hist) != nil || len(hist.Invocations) != 2 {
		t.Errorf("bench.json should record 2 invocations: %v %+v", err, hist)
	}
}

// checkSmokeRunsCSV checks TestBenchCLISmoke's runs.csv: one row per run
// and iteration, |B| evaluations per iteration (--init 0), consistent
// regrets and non-negative timings.
func checkSmokeRunsCSV(t *testing.T, out string, runs []benchRun, iters int) {
	t.Helper()
	rows := readRunsCSV(t, filepath.Join(out, bench.RunsFile))
	if len(rows) != len(runs)*iters {
		t.Fatalf("runs.csv has %d rows, want %d runs × %d iterations", len(rows), len(runs), iters)
	}
	perRun := map[benchRun][]int{}
	for _, m := range rows {
		run := benchRun{m["problem"], m["acquisition"], atoiT(t, m["batch"]), atoiT(t, m["seed"])}
		it := atoiT(t, m["iteration"])
		perRun[run] = append(perRun[run], it)
		// --init 0: no initial design, so |B| evaluations per iteration.
		if ev := atoiT(t, m["evaluations"]); ev != it*run.batch {
			t.Errorf("%+v iteration %d: %d evaluations, want %d (--init 0)", run, it, ev, it*run.batch)
		}
		rg := atofT(t, m["regret"])
		// f* is known to ~1e-12, so a regret may be that far below 0.
		if rg < -1e-9 || math.Abs(atofT(t, m["log10_regret"])-math.Log10(math.Max(rg, bench.RegretFloor))) > 1e-12 {
			t.Errorf("%+v iteration %d: regret %s, log10_regret %s", run, it, m["regret"], m["log10_regret"])
		}
		for _, c := range []string{"fit_s", "propose_s", "eval_s"} {
			if atofT(t, m[c]) < 0 {
				t.Errorf("%+v iteration %d: %s = %s", run, it, c, m[c])
			}
		}
	}
	for _, run := range runs {
		its := perRun[run]
		sort.Ints(its)
		if fmt.Sprint(its) != "[1 2 3]" {
			t.Errorf("run %+v has iterations %v in runs.csv, want [1 2 3]", run, its)
		}
	}
}

// checkSmokeSummary checks TestBenchCLISmoke's summary.md (the settings,
// nruns complete runs, a table row per acquisition) and figures.
func checkSmokeSummary(t *testing.T, out string, problems, acqs []string, batches []int, nruns int) {
	t.Helper()
	sum, err := os.ReadFile(filepath.Join(out, bench.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(sum)
	for _, want := range []string{
		"initial design none", "observation noise variance 0,", "|X*| 3", "2 run(s) in parallel",
		"parameters: sample_seed=3", fmt.Sprintf("runs: %d complete, 0 failed, 0 incomplete (of %d)", nruns, nruns),
		"--init 0 --noise-var 0 --trusted 3 --jobs 2 --param sample_seed=3",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q", want)
		}
	}
	for _, p := range problems {
		for _, q := range batches {
			tab := tableRows(summarySection(t, md, p, q))
			if len(tab) != len(acqs) {
				t.Errorf("%s |B| = %d: %d table rows, want one per acquisition: %v", p, q, len(tab), tab)
				continue
			}
			for i, a := range acqs {
				// acquisition | runs | mean | SE | median | median best-evaluated | propose | fit | fallback | failed
				row := tab[i]
				if len(row) != 10 || row[0] != a || row[1] != "1" || row[9] != "0" {
					t.Errorf("%s |B| = %d: row %v, want %s with 1 complete run, 0 failed", p, q, row, a)
					continue
				}
				atofT(t, row[2])
			}
			base := fmt.Sprintf("%s_q%d.png", strings.ReplaceAll(p, "/", "-"), q)
			testenv.CheckPNG(t, filepath.Join(out, "regret_"+base))
			testenv.CheckPNG(t, filepath.Join(out, "box_"+base))
		}
	}
}

// checkSmokeStored checks that TestBenchCLISmoke's flags reached the stored
// studies and returns each run's number of trials. noise_var is stored
// after the host's defaults: 0 is noise-free (the default would be 1e-4).
func checkSmokeStored(t *testing.T, dbPath string, runs []benchRun, iters int) map[benchRun]int {
	t.Helper()
	trials := map[benchRun]int{}
	for _, run := range runs {
		o, info := storedSettings(t, dbPath, run.studyName())
		if info.Optimum == nil {
			t.Fatalf("study %s: no f* stored", run.studyName())
		}
		opt := *info.Optimum
		if !o.NoInit || o.Init != 0 || o.NoiseVar != 0 || o.AcqOptions.Trusted != 3 || o.Batch != run.batch || o.Acquisition != run.acq {
			t.Errorf("%s stored %+v: want no initial design, noise_var 0, |X*| 3, batch %d, %s",
				run.studyName(), o, run.batch, run.acq)
		}
		if run.problem == "synthetic/gpsample" {
			// --param sample_seed=3 selected draw 3 (f* pinned), not the
			// default draw 0, and is kept with the study.
			if math.Abs(opt-gpSampleDraw3Optimum) > 1e-9 || o.Params["sample_seed"] != "3" {
				t.Errorf("%s: f* %.17g, params %v: want draw 3 (f* %.17g)", run.studyName(), opt, o.Params, gpSampleDraw3Optimum)
			}
		} else if len(o.Params) != 0 {
			t.Errorf("%s: params %v, want none (sample_seed applies to gpsample only)", run.studyName(), o.Params)
		}
		tr, _ := loadTrials(t, dbPath, run.studyName())
		trials[run] = len(tr)
		if len(tr) != iters*run.batch {
			t.Errorf("%s: %d trials, want %d", run.studyName(), len(tr), iters*run.batch)
		}
	}
	return trials
}

// A failed run is recorded, not fatal: a run stored with a damaged trial
// row fails on the rerun, the other runs finish, the outputs are written
// with the failures listed, each failure gets an error-level progress
// line, and the command exits 1 with one error line.
func TestBenchCLIFailedRunExits1(t *testing.T) {
	dir := t.TempDir()
	base := []string{"bench", "--problems", "synthetic/branin", "--seeds", "1", "--iters", "1", "--out", "out"}
	if r := cli(t, dir, append(base, "--acqs", "random")...); r.code != 0 {
		t.Fatalf("first invocation: exit %d: %s", r.code, r.stderr)
	}
	rawExec(t, filepath.Join(dir, "out", bench.DBFile),
		`UPDATE trials SET u='[0.5]' WHERE id=0 AND study_id=(SELECT id FROM studies WHERE name LIKE '%/random/%')`)
	r := cli(t, dir, append(base, "--acqs", "random,ei")...)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "2 runs: 1 done, 0 already complete, 1 failed") {
		t.Errorf("stdout lacks the run counts:\n%s", r.stdout)
	}
	lines := errorLines(r.stderr)
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "tesbo-host: 1 run(s) failed") || !strings.Contains(lines[0], "running the same command again retries them") {
		t.Errorf("want one error line about the failed run, got %q", lines)
	}
	var failed, done int
	for _, p := range progressLines(t, r.stderr) {
		switch {
		case p.Acq == "random" && p.Status == "failed" && p.Level == "error" && strings.Contains(p.Error, "1 unit-cube coordinates"):
			failed++
		case p.Acq == "ei" && p.Status == "done" && p.Level == "info":
			done++
		default:
			t.Errorf("unexpected progress line %+v", p)
		}
	}
	if failed != 1 || done != 1 {
		t.Errorf("progress lines: %d failed, %d done; want 1 and 1:\n%s", failed, done, r.stderr)
	}
	sum, err := os.ReadFile(filepath.Join(dir, "out", bench.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"runs: 1 complete, 1 failed, 0 incomplete (of 2)", "## Failed and incomplete runs",
		"| synthetic/branin | random | 1 | 0 | failed | 1 | reopen study: "} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	// The damaged run's record of its iteration was stored before the
	// damage: it is still reported, beside the ei run's.
	rows := readRunsCSV(t, filepath.Join(dir, "out", bench.RunsFile))
	if len(rows) != 2 || rows[0]["acquisition"] != "random" || rows[1]["acquisition"] != "ei" {
		t.Errorf("runs.csv rows %v, want the random and ei runs' iterations", rows)
	}
}

// 'bench --help' documents the exit statuses and the progress lines.
func TestBenchCLIHelp(t *testing.T) {
	r := cli(t, t.TempDir(), "bench", "--help")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"Exit status: 0 when every run is complete; 1 when any run failed", "2 for bad input",
		"recorded, not fatal", "one log line per finished run on stderr"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bench --help lacks %q", want)
		}
	}
}

// Bad bench input: exit 2, one error line, nothing on stdout, nothing
// written (not even the output directory).
func TestBenchCLIBadInput(t *testing.T) {
	dir := t.TempDir()
	ok := []string{"--problems", "synthetic/branin", "--acqs", "ei", "--iters", "1", "--out", "out"}
	with := func(extra ...string) []string { return append(append([]string{"bench"}, ok...), extra...) }
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"missing out", []string{"bench", "--problems", "synthetic/branin", "--acqs", "ei"}, []string{"out"}},
		{"missing problems", []string{"bench", "--acqs", "ei", "--out", "out"}, []string{"--problems or --suite is required"}},
		{"missing acqs", []string{"bench", "--problems", "synthetic/branin", "--out", "out"}, []string{"--acqs is required"}},
		{"zero seeds", with("--seeds", "0"), []string{"--seeds"}},
		{"zero iters", with("--iters", "0"), []string{"--iters"}},
		{"negative init", with("--init", "-1"), []string{"--init"}},
		{"zero jobs", with("--jobs", "0"), []string{"--jobs"}},
		{"negative noise", with("--noise-var", "-1"), []string{"--noise-var"}},
		{"NaN noise", with("--noise-var", "NaN"), []string{"--noise-var"}},
		{"noise not a number", with("--noise-var", "lots"), []string{"noise-var"}},
		{"negative trusted", with("--trusted", "-1"), []string{"trusted"}},
		{"batch 0", with("--batch", "0"), []string{"batch size"}},
		{"batch not a number", with("--batch", "two"), []string{"batch size"}},
		{"batch twice", with("--batch", "1,1"), []string{"twice"}},
		{"unknown acquisition", []string{"bench", "--problems", "synthetic/branin", "--acqs", "nope", "--out", "out"}, []string{"unknown acquisition \"nope\"", "tes-ep"}},
		{"unknown problem", []string{"bench", "--problems", "synthetic/nope", "--acqs", "ei", "--out", "out"}, []string{"nope", "branin"}},
		{"seed as problem parameter", []string{"bench", "--problems", "synthetic/branin:seed=1", "--acqs", "ei", "--out", "out"}, []string{"reserved"}},
		{"param without =", with("--param", "foo"), []string{"key=value"}},
		{"noise_var as param", with("--param", "noise_var=1"), []string{"--noise-var"}},
		{"param no problem accepts", with("--param", "dimm=3"), []string{"dimm", "none of the problems"}},
		{"bad log level", with("--log-level", "loud"), []string{"--log-level"}},
		{"unknown suite", []string{"bench", "--suite", "nope", "--acqs", "ei", "--out", "out"}, []string{"unknown --suite", "user"}},
		{"suite and problems", with("--suite", "user"), []string{"exclude each other"}},
		{"unknown GP prior", with("--gp-prior", "tight"), []string{"unknown GP prior", "scaled"}},
		{"unknown model", with("--model", "sparse"), []string{"bad --model", "local"}},
		{"too many local points", with("--local-points", "5000"), []string{"bad --local-points", "4000"}},
		{"too many seeds", with("--seeds", "100000000"), []string{"MaxSeeds"}},
		{"too large a batch", with("--batch", "5000"), []string{"MaxBatch"}},
		{"unknown flag", with("--bogus"), []string{"unknown flag"}},
		{"extra argument", with("extra"), []string{"unknown command"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, dir, c.args...)
			checkUsageError(t, r, c.want)
			if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
				t.Fatalf("bad input created the output directory (%v)", err)
			}
		})
	}
}

// --suite user gives every problem its own budget (usersuite.Budget);
// --iters or --init, when given, apply to all problems instead.
func TestBenchUserSuiteBudgets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changed []string
	}{{"defaults", nil}, {"--iters", []string{"iters"}}, {"--init", []string{"init"}}} {
		f := benchFlags{suiteName: "user", acqs: []string{"ei"}, seeds: 1, iters: 7, init: 3, jobs: 1, out: "out",
			changed: func(name string) bool { return slices.Contains(tc.changed, name) }}
		s, err := f.suite()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		byName := map[string]bench.Problem{}
		for _, p := range bench.UserProblems() {
			byName[p.Name] = p
		}
		if len(s.Problems) != len(byName) {
			t.Fatalf("%s: %d problems, want %d", tc.name, len(s.Problems), len(byName))
		}
		for _, p := range s.Problems {
			want := byName[p.Name]
			if slices.Contains(tc.changed, "iters") {
				want.Iters = 0 // the suite's --iters
			}
			if slices.Contains(tc.changed, "init") {
				want.Init = 0
			}
			if p.Iters != want.Iters || p.Init != want.Init {
				t.Errorf("%s: %s has init %d, iters %d; want %d, %d", tc.name, p.Name, p.Init, p.Iters, want.Init, want.Iters)
			}
		}
	}
}

// A setting a study would refuse (a batch above the acquisition's limit,
// an acquisition that cannot take the problem's outputs) is bad input for
// bench as for run: exit 2 before anything runs or is written.
func TestBenchRefusesWhatStudiesRefuse(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"--problems", "synthetic/branin", "--acqs", "tes", "--batch", "101"},
		{"--problems", "synthetic/branincurrin", "--acqs", "ei"},
	} {
		out := filepath.Join(dir, "out")
		r := cli(t, dir, append([]string{"bench", "--out", out, "--seeds", "1", "--iters", "1"}, args...)...)
		if _, err := os.Stat(out); r.code != 2 || err == nil {
			t.Errorf("bench %v: exit %d (output directory written: %v), stderr %s; want exit 2 and nothing written", args, r.code, err == nil, r.stderr)
		}
	}
}
