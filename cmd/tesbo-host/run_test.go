package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
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
	if !strings.Contains(initLine, "the objective declares") || !strings.Contains(initLine, "2 for synthetic/*") || strings.Contains(initLine, "(default -") {
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

// 'plugins' shows an objective no study can take (here more parameters
// than host.MaxDim) as an error, as run would refuse it, not as healthy.
func TestPluginsShowsWhatNoStudyTakes(t *testing.T) {
	ps := make([]sdk.Param, host.MaxDim+1)
	for i := range ps {
		ps[i] = sdk.Param{Name: fmt.Sprintf("x%d", i), Low: 0, High: 1}
	}
	var b strings.Builder
	printPlugins(&b, "dir", []loader.Plugin{{Name: "wide", Kind: loader.KindObjective, Info: &sdk.Info{Name: "wide", Params: ps}}})
	if !strings.Contains(b.String(), "ERROR: no study can take it: the space has 1001 parameters") || !strings.Contains(b.String(), "1 plugin(s) failed to load") {
		t.Fatalf("plugins output:\n%s", b.String())
	}
}
