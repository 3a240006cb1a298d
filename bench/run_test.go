package bench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tesbo/tesbo/problems"
	"github.com/tesbo/tesbo/sdk"

	"github.com/tesbo/tesbo/internal/testenv"
)

// smokeSuite is the CI configuration: Branin, random and EI, 1 seed, 3
// iterations.
func smokeSuite(out string) Suite {
	return Suite{
		Problems:     []Problem{{Name: "synthetic/branin"}},
		Acquisitions: []string{"random", "ei"},
		Seeds:        1,
		Iters:        3,
		Jobs:         2,
		Out:          out,
		Command:      "tesbo-host bench --problems synthetic/branin --acqs random,ei --seeds 1 --iters 3",
	}
}

func TestSmoke(t *testing.T) {
	out := t.TempDir()
	rep, err := Run(context.Background(), smokeSuite(out))
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Count(StatusDone); n != 2 {
		t.Fatalf("%d runs done, want 2: %+v", n, rep.Runs)
	}
	rows, err := ReadRunsCSV(filepath.Join(out, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*3 {
		t.Fatalf("runs.csv has %d rows, want 6", len(rows))
	}
	perAcq := map[string]int{}
	for _, r := range rows {
		perAcq[r.Acquisition]++
		if r.Problem != "synthetic/branin" || r.Batch != 1 || r.Seed != 0 {
			t.Errorf("bad row identity %+v", r)
		}
		if r.Regret == nil || *r.Regret < 0 {
			t.Errorf("iteration %d of %s: regret %v, want ≥ 0", r.Iter, r.Acquisition, r.Regret)
		}
		// 2 initial points, then one per iteration.
		if r.Evals != 2+r.Iter {
			t.Errorf("iteration %d: %d evaluations, want %d", r.Iter, r.Evals, 2+r.Iter)
		}
		if r.ProposeS < 0 || r.FitS < 0 || r.EvalS < 0 {
			t.Errorf("negative timing in %+v", r)
		}
	}
	if perAcq["random"] != 3 || perAcq["ei"] != 3 {
		t.Errorf("rows per acquisition %v, want 3 each", perAcq)
	}
	sum, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## synthetic/branin, |B| = 1", "| ei | 1 |", "| random | 1 |", "wall time", smokeSuite(out).Command} {
		if !strings.Contains(string(sum), want) {
			t.Errorf("summary.md lacks %q:\n%s", want, sum)
		}
	}
	for _, f := range []string{"regret_synthetic-branin_q1.png", "box_synthetic-branin_q1.png"} {
		testenv.CheckPNG(t, filepath.Join(out, f))
	}
}

// countingOpener opens synthetic objectives whose evaluations call onEval.
func countingOpener(onEval func()) opener {
	return func(ctx context.Context, name string) (sdk.Objective, bool, error) {
		obj, ex, err := Synthetic(ctx, name)
		if err != nil {
			return nil, ex, err
		}
		return &hooked{Objective: obj, onEval: onEval}, ex, nil
	}
}

// hooked wraps a synthetic objective (keeping Configure, Keys and
// EvaluateNoiseFree visible) and calls onEval before each evaluation.
type hooked struct {
	sdk.Objective
	onEval func()
}

func (h *hooked) Evaluate(ctx context.Context, x []float64) (float64, error) {
	h.onEval()
	return h.Objective.Evaluate(ctx, x)
}

func (h *hooked) Configure(ctx context.Context, p map[string]string) error {
	return h.Objective.(sdk.Configurable).Configure(ctx, p)
}

func (h *hooked) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	return h.Objective.(sdk.NoiseFree).EvaluateNoiseFree(ctx, x)
}

func (h *hooked) Keys() []string {
	return h.Objective.(interface{ Keys() []string }).Keys()
}

// TestResume interrupts a suite mid-way (the context is cancelled after a
// number of evaluations, as a kill would stop it), runs it again, and checks
// that the results equal those of an uninterrupted suite: finished runs are
// skipped, partial ones resumed with their evaluations kept.
func TestResume(t *testing.T) {
	base := Suite{
		Problems:     []Problem{{Name: "synthetic/branin"}},
		Acquisitions: []string{"ei", "random"},
		Seeds:        2,
		Iters:        4,
		Jobs:         1,
	}
	ref := base
	ref.Out = t.TempDir()
	if _, err := Run(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	want, err := ReadRunsCSV(filepath.Join(ref.Out, RunsFile))
	if err != nil {
		t.Fatal(err)
	}

	s := base
	s.Out = t.TempDir()
	ctx, cancel := context.WithCancelCause(context.Background())
	var evals atomic.Int64
	// 4 runs × 6 evaluations: stop in the middle of the second run.
	s.Open = countingOpener(func() {
		if evals.Add(1) == 9 {
			cancel(errors.New("simulated kill"))
		}
	})
	rep, err := Run(ctx, s)
	if err == nil || !strings.Contains(err.Error(), "simulated kill") {
		t.Fatalf("interrupted suite: error %v, want the cancellation cause", err)
	}
	if rep.Count(StatusDone) != 1 || rep.Count(StatusInterrupted) != 1 || rep.Count(StatusNotStarted) != 2 {
		t.Fatalf("statuses after interruption: %+v", rep.Runs)
	}
	partial, err := ReadRunsCSV(filepath.Join(s.Out, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(partial) >= len(want) || len(partial) < 4 {
		t.Errorf("partial runs.csv has %d rows (complete: %d)", len(partial), len(want))
	}

	s.Open = nil
	rep, err = Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(StatusSkipped) != 1 || rep.Count(StatusDone) != 3 {
		t.Errorf("statuses after resume: want 1 skipped, 3 done: %+v", rep.Runs)
	}
	got, err := ReadRunsCSV(filepath.Join(s.Out, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("resumed suite has %d rows, uninterrupted %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Problem != g.Problem || w.Acquisition != g.Acquisition || w.Seed != g.Seed || w.StudySeed != g.StudySeed ||
			w.Iter != g.Iter || w.Evals != g.Evals || !samePtr(w.Regret, g.Regret) || !samePtr(w.BestValue, g.BestValue) {
			t.Errorf("row %d: resumed %+v, uninterrupted %+v", i, g, w)
		}
	}
	h, err := os.ReadFile(filepath.Join(s.Out, HistoryFile))
	if err != nil || strings.Count(string(h), `"started"`) != 2 {
		t.Errorf("bench.json should record 2 invocations: %s %v", h, err)
	}
}

func samePtr(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestFailedRunRecorded: a run whose objective cannot be opened fails
// alone; the others finish and the summary lists the failure.
func TestFailedRunRecorded(t *testing.T) {
	s := smokeSuite(t.TempDir())
	s.Iters = 2
	s.Jobs = 1
	var mu sync.Mutex
	opens := 0
	s.Open = func(ctx context.Context, name string) (sdk.Objective, bool, error) {
		mu.Lock()
		opens++
		n := opens
		mu.Unlock()
		if n == 2 { // the probe is open 1; the first run's objective fails
			return nil, false, errors.New("plugin crashed at start")
		}
		return Synthetic(ctx, name)
	}
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatalf("a failed run must not fail the suite: %v", err)
	}
	if rep.Count(StatusFailed) != 1 || rep.Count(StatusDone) != 1 {
		t.Fatalf("statuses %+v", rep.Runs)
	}
	sum, err := os.ReadFile(filepath.Join(s.Out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "plugin crashed at start") || !strings.Contains(string(sum), "## Failed and incomplete runs") {
		t.Errorf("summary.md does not list the failed run:\n%s", sum)
	}
	// The failed run is retried by the next invocation.
	s.Open = nil
	rep, err = Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(StatusDone) != 1 || rep.Count(StatusSkipped) != 1 {
		t.Errorf("rerun: want the failed run done and the other skipped: %+v", rep.Runs)
	}
}

// TestIncompatibleStudy: a suite whose output directory holds its runs
// made with other settings is refused before anything runs or is
// written, so the tables keep the stored results; a longer budget is
// compatible.
func TestIncompatibleStudy(t *testing.T) {
	s := smokeSuite(t.TempDir())
	s.Acquisitions = []string{"random"}
	s.Iters, s.Seeds = 1, 2
	if _, err := Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, f := range []string{SummaryFile, RunsFile, HistoryFile} {
		before[f], _ = os.ReadFile(filepath.Join(s.Out, f))
	}
	s.NoiseVar = 1e-2
	_, err := Run(context.Background(), s)
	var inv *InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "other settings (noise_var: stored 0.0001, this suite 0.01)") ||
		!strings.Contains(err.Error(), "use a new --out") || !strings.Contains(err.Error(), "(and 1 more of this suite's runs") {
		t.Fatalf("changed noise: want an InvalidError about other settings, got %v", err)
	}
	for f, b := range before {
		if got, _ := os.ReadFile(filepath.Join(s.Out, f)); !bytes.Equal(got, b) {
			t.Errorf("%s changed by the refused suite", f)
		}
	}
	// A longer budget is compatible: the study is extended.
	s.NoiseVar = 0
	s.Iters = 2
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(StatusDone) != 2 || len(rep.Runs[0].Rows) != 2 {
		t.Errorf("extended budget: %+v", rep.Runs)
	}
}

func TestParamsRouting(t *testing.T) {
	s := smokeSuite(t.TempDir())
	s.Params = map[string]string{"dim": "3"}
	s.Problems = []Problem{{Name: "synthetic/branin"}, {Name: "synthetic/ackley"}}
	params, err := s.resolveParams(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(params["synthetic/branin"]) != 0 || params["synthetic/ackley"]["dim"] != "3" {
		t.Errorf("params routed as %v: want dim only for ackley", params)
	}
	s.Params = map[string]string{"dimm": "3"}
	if _, err := s.resolveParams(context.Background()); err == nil || !strings.Contains(err.Error(), "none of the problems") {
		t.Errorf("misspelt parameter: error %v", err)
	}
	s.Params = nil
	s.Problems = []Problem{{Name: "synthetic/log10p"}}
	if _, err := s.resolveParams(context.Background()); err == nil {
		t.Error("log10p without data: no error before the runs")
	}
}

// TestBestTrueRegret checks the oracle rule on a noisy problem: it never
// increases, never exceeds the user's rule (the best observed trial is one
// of the trials it minimizes over), and on a noisy objective it differs from
// the user's rule somewhere (otherwise it would add nothing).
func TestBestTrueRegret(t *testing.T) {
	out := t.TempDir()
	s := smokeSuite(out)
	s.Problems = []Problem{{Name: "synthetic/branin", Params: map[string]string{"noise_var": "4"}}}
	s.Acquisitions, s.Iters = []string{"random"}, 30
	if _, err := Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadRunsCSV(filepath.Join(out, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	differs := false
	for i, r := range rows {
		if r.BestTrueRegret == nil || r.BestEvalRegret == nil {
			t.Fatalf("iteration %d: best_true_regret %v, best_eval_regret %v, want both", r.Iter, r.BestTrueRegret, r.BestEvalRegret)
		}
		if *r.BestTrueRegret > *r.BestEvalRegret {
			t.Errorf("iteration %d: oracle regret %g above the user's rule's %g", r.Iter, *r.BestTrueRegret, *r.BestEvalRegret)
		}
		if i > 0 && *r.BestTrueRegret > *rows[i-1].BestTrueRegret {
			t.Errorf("iteration %d: oracle regret rose from %g to %g", r.Iter, *rows[i-1].BestTrueRegret, *r.BestTrueRegret)
		}
		differs = differs || *r.BestTrueRegret < *r.BestEvalRegret
	}
	if !differs {
		t.Error("with noise variance 4 the oracle rule never differed from the user's rule")
	}
}

// TestInvalidErrorUnwraps: errors.Is and errors.As see through an
// InvalidError to its cause (its Unwrap method is what they call).
func TestInvalidErrorUnwraps(t *testing.T) {
	cause := errors.New("bad value")
	var err error = &InvalidError{Err: cause}
	if !errors.Is(err, cause) {
		t.Errorf("errors.Is(%v, cause) = false", err)
	}
}

// sharedObjective stands for a plugin's shared instance: one object for
// every run, which must never be used by two at once (busy counts the
// calls in progress), and whose noise-free evaluation may fail.
type sharedObjective struct {
	obj     sdk.Objective
	nfFails bool
	busy    atomic.Int32
	overlap atomic.Bool
}

func (o *sharedObjective) enter() func() {
	if o.busy.Add(1) > 1 {
		o.overlap.Store(true)
	}
	return func() { o.busy.Add(-1) }
}

func (o *sharedObjective) Info(ctx context.Context) (sdk.Info, error) { return o.obj.Info(ctx) }

func (o *sharedObjective) Configure(ctx context.Context, p map[string]string) error {
	defer o.enter()()
	return o.obj.(sdk.Configurable).Configure(ctx, p)
}

func (o *sharedObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	defer o.enter()()
	return o.obj.Evaluate(ctx, x)
}

func (o *sharedObjective) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	defer o.enter()()
	if o.nfFails {
		return 0, errors.New("plugin exited")
	}
	return o.obj.(sdk.NoiseFree).EvaluateNoiseFree(ctx, x)
}

// The user's rule (best_eval_regret) and the oracle rule are filled for an
// objective served by one shared instance, as a plugin's runs are, under
// the lock its runs hold (two jobs, two seeds: never two users at once);
// when its noise-free evaluation fails the runs' rows stand without them.
func TestBestEvaluatedShared(t *testing.T) {
	for _, fails := range []bool{false, true} {
		obj, err := problems.New("synthetic/branin")
		if err != nil {
			t.Fatal(err)
		}
		shared := &sharedObjective{obj: obj, nfFails: fails}
		out := t.TempDir()
		s := smokeSuite(out)
		s.Seeds, s.Iters, s.Acquisitions = 2, 4, []string{"random"}
		s.Problems = []Problem{{Name: "synthetic/branin", Params: map[string]string{"noise_var": "0.5"}}}
		s.Open = func(context.Context, string) (sdk.Objective, bool, error) { return shared, true, nil }
		rep, err := Run(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if shared.overlap.Load() {
			t.Error("the shared instance was used by two at once")
		}
		for _, run := range rep.Runs {
			if run.Status != StatusDone || len(run.Rows) != 4 {
				t.Fatalf("noise-free fails %v: run %+v, want done with 4 rows", fails, run)
			}
			for _, r := range run.Rows {
				if filled := r.BestEvalRegret != nil && r.BestTrueRegret != nil; filled == fails {
					t.Fatalf("noise-free fails %v: iteration %d best_eval_regret %v, best_true_regret %v", fails, r.Iter, r.BestEvalRegret, r.BestTrueRegret)
				}
			}
		}
	}
}

// A second bench on an output directory another holds is refused at once
// (an InvalidError naming the holder), rather than failing the runs the
// first holds and overwriting its tables; the lock goes with its holder.
func TestOutputDirectoryLocked(t *testing.T) {
	out := t.TempDir()
	unlock, err := lockOut(out)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), smokeSuite(out))
	var inv *InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "another bench (pid") {
		t.Fatalf("Run on a locked directory: %v, want an InvalidError naming the other bench", err)
	}
	unlock()
	if _, err := Run(context.Background(), smokeSuite(out)); err != nil {
		t.Fatalf("Run once the lock is released: %v", err)
	}
}

// A suite with fewer iterations than its stored runs reports their first
// iterations as complete runs, where the runs failed on the budget.
func TestShorterSuiteReadsStoredRuns(t *testing.T) {
	s := smokeSuite(t.TempDir())
	s.Acquisitions = []string{"random"}
	s.Iters = 3
	if _, err := Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	s.Iters = 2
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Count(StatusSkipped) != 1 || len(rep.Runs[0].Rows) != 2 {
		t.Fatalf("shorter suite: %+v", rep.Runs)
	}
}
