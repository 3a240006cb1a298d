package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

// curveObjective trains for steps epochs: its value at epoch k is
// q(x)·(1 − e^(−k/3)) with q(x) = 1 − ‖x − 0.3‖², reported through
// sdk.Report after each epoch; when told to stop it returns its last value.
type curveObjective struct{ steps int }

func (o curveObjective) Info(context.Context) (sdk.Info, error) {
	i := unitInfo(2)
	i.MaxStep = o.steps
	return i, nil
}

func (o curveObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	q := 1 - (x[0]-0.3)*(x[0]-0.3) - (x[1]-0.3)*(x[1]-0.3)
	var v float64
	for k := 1; k <= o.steps; k++ {
		v = q * (1 - math.Exp(-float64(k)/3))
		if prune, err := sdk.Report(ctx, k, v); err != nil || prune {
			return v, err
		}
	}
	return v, nil
}

func pruningOptions() Options {
	o := baseOptions(7)
	o.Acquisition, o.Proposer = "test-random", randomProposer{} // uniform points: some fall behind
	o.Batch, o.Iters, o.Init = 1, 10, 4
	o.Pruning = Pruning{Rule: PrunerMedian, Model: PruneModelLast}
	return o
}

// checkPruned checks what a pruned trial holds: state, the last reported
// value as its value, a step short of the full run, and that none of the
// initial design was pruned. It returns the number of pruned trials.
func checkPruned(t *testing.T, trials []Trial, steps int) int {
	t.Helper()
	n := 0
	for _, tr := range trials {
		if tr.Status == Complete && len(tr.Intermediates) != steps {
			t.Errorf("complete trial %d reported %d values, want %d", tr.ID, len(tr.Intermediates), steps)
		}
		if tr.Status != Pruned {
			continue
		}
		n++
		last := tr.Intermediates[len(tr.Intermediates)-1]
		if tr.Iteration == 0 || last.Step >= steps || math.Float64bits(last.Value) != math.Float64bits(tr.Value) {
			t.Errorf("pruned trial %d (iteration %d): value %v, last report %+v of %d steps", tr.ID, tr.Iteration, tr.Value, last, steps)
		}
	}
	return n
}

// A study with the median rule prunes trials that fall behind, stores them
// pruned with their last value and step, counts them in its budget, and
// resumes bitwise: a run interrupted mid-study and reopened ends with
// exactly the trials — states, values, intermediate values — of an
// uninterrupted one.
func TestPrunedTrialsResumeBitwise(t *testing.T) {
	ctx := context.Background()
	obj := curveObjective{steps: 9}
	want, err := Optimize(ctx, obj, pruningOptions())
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Trials) != 14 {
		t.Fatalf("%d trials, want the budget of 14", len(want.Trials))
	}
	pruned := checkPruned(t, want.Trials, obj.steps)
	if pruned == 0 || want.Pruned != pruned {
		t.Fatalf("%d trials pruned (result says %d), want some", pruned, want.Pruned)
	}
	// The GP sees pruned trials at their last value; recommendations are
	// complete trials.
	ds := newDataset(want.Trials, 2, false)
	if ds.n() != len(want.Trials) {
		t.Fatalf("the model's data hold %d of %d finished trials", ds.n(), len(want.Trials))
	}
	if want.Best == nil || want.Trials[want.Best.TrialID].Status != Complete {
		t.Fatalf("recommended %+v, not a complete trial", want.Best)
	}
	got := reopenAndRun(t, interruptedStudy(t, obj, pruningOptions(), 9), Options{Proposer: randomProposer{}}, obj)
	sameTrials(t, want.Trials, got)
	for i := range got {
		if a, b := want.Trials[i].Intermediates, got[i].Intermediates; len(a) != len(b) {
			t.Fatalf("trial %d: %d intermediate values, want %d", i, len(b), len(a))
		} else {
			for j := range a {
				if a[j].Step != b[j].Step || math.Float64bits(a[j].Value) != math.Float64bits(b[j].Value) {
					t.Fatalf("trial %d intermediate %d: %+v, want %+v", i, j, b[j], a[j])
				}
			}
		}
	}
}

// Without a pruner an objective's reports go nowhere and nothing changes.
func TestNoPrunerNoReports(t *testing.T) {
	o := pruningOptions()
	o.Pruning = Pruning{}
	res, err := Optimize(context.Background(), curveObjective{steps: 5}, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Status != Complete || tr.Intermediates != nil {
			t.Fatalf("trial %d: %s with %d intermediate values", tr.ID, tr.Status, len(tr.Intermediates))
		}
	}
}

// Ask/Tell: Study.Report records intermediate values and relays the
// pruner's decision; Tell then stores the trial pruned at its last step.
// Reports out of order or not finite are refused.
func TestAskTellReport(t *testing.T) {
	ctx := context.Background()
	o := baseOptions(3)
	o.Batch, o.Init, o.Iters = 1, 2, 2
	o.Pruning = Pruning{Rule: PrunerMedian}
	s, err := NewStudy(ctx, unitInfo(2), o)
	if err != nil {
		t.Fatal(err)
	}
	id := reportInitialDesign(t, s)
	if p, err := s.Report(ctx, id, 1, 2); p || err != nil { // 2 = median 2: kept
		t.Fatalf("step 1: prune %v, %v", p, err)
	}
	if _, err := s.Report(ctx, id, 1, 5); err == nil {
		t.Fatal("a repeated step was accepted")
	}
	if _, err := s.Report(ctx, id, 5, math.NaN()); err == nil {
		t.Fatal("NaN was accepted")
	}
	if p, err := s.Report(ctx, id, 2, 2.5); !p || err != nil { // best 2.5 < median 3
		t.Fatalf("step 2: prune %v, %v; want true", p, err)
	}
	if err := s.Tell(ctx, id, 2.5, nil); err != nil {
		t.Fatal(err)
	}
	tr := s.Trials()[id]
	if tr.Status != Pruned || tr.Value != 2.5 || len(tr.Intermediates) != 2 || tr.Intermediates[1].Step != 2 {
		t.Fatalf("told trial: %+v", tr)
	}
	if _, err := s.Report(ctx, id, 3, 1); !errors.Is(err, ErrNotInFlight) {
		t.Fatalf("report after tell: %v", err)
	}
}

// Bad pruning settings are refused when the study is made.
func TestPruningValidate(t *testing.T) {
	for _, p := range []Pruning{
		{Rule: "nope"}, {Rule: PrunerASHA, Eta: 1}, {Rule: PrunerASHA, Eta: MaxPrunerEta + 1},
		{Rule: PrunerMedian, WarmupSteps: -1}, {Rule: PrunerMedian, StartupTrials: MaxPrunerStartup + 1},
		{Rule: PrunerHyperband}, // no max step: unitInfo declares none
		{Rule: PrunerASHA, MaxStep: sdk.MaxStepLimit + 1},
	} {
		o := baseOptions(1)
		o.Pruning = p
		if _, err := NewStudy(context.Background(), unitInfo(2), o); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

// Workers sharing a study stop trials early too: the pruner compares with
// the finished trials of earlier iterations read from the database, and
// the pruned trials are stored with their last value and step. The study
// is made for them with the stand-in; the default (the curve model) is
// refused by the workers, saying so.
func TestWorkerPrunes(t *testing.T) {
	ctx := context.Background()
	obj := curveObjective{steps: 9}
	info, _ := obj.Info(ctx)
	for name, db := range map[string]*Storage{"memory": MemoryStorage(), "sqlite": wrap(openTestDB(t, t.TempDir()+"/w.db"))} {
		t.Run(name, func(t *testing.T) {
			o := Options{DB: db, Name: "curve", Acquisition: "random", Batch: 2, Iters: 8, Init: 4, Seed: 3,
				Pruning: Pruning{Rule: PrunerMedian}}
			s, err := NewStudy(ctx, info, o)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if _, err := RunWorker(ctx, db, "curve", obj, WorkerOptions{}); err == nil || !strings.Contains(err.Error(), "PruneModelLast") {
				t.Fatalf("a worker on a study with the default curve model: %v", err)
			}
			o.Name, o.Pruning.Model = "w", PruneModelLast
			if s, err = NewStudy(ctx, info, o); err != nil {
				t.Fatal(err)
			}
			s.Close()
			res, err := RunWorker(ctx, db, "w", obj, WorkerOptions{Parallel: 2, Poll: 2 * time.Millisecond})
			if err != nil || !res.Done {
				t.Fatalf("worker: %+v %v", res, err)
			}
			trials, err := db.Trials(ctx, "w")
			if err != nil || len(trials) != 20 {
				t.Fatalf("%d trials, %v", len(trials), err)
			}
			if checkPruned(t, trials, obj.steps) == 0 {
				t.Fatal("the workers pruned nothing")
			}
		})
	}
}

// A report that races the trial's Tell is either in what Tell records or
// refused with ErrNotInFlight, never accepted and lost: Tell closes the
// curve it reads.
func TestReportAfterTellRefused(t *testing.T) {
	c := &trialCurve{decide: func([]Intermediate) bool { return false }}
	if _, err := c.Report(1, 0.5); err != nil {
		t.Fatal(err)
	}
	got, _ := c.close()
	if _, err := c.Report(2, 0.6); !errors.Is(err, ErrNotInFlight) || len(got) != 1 {
		t.Fatalf("report after the Tell read the curve: %v (curve %v), want ErrNotInFlight", err, got)
	}
}

// Settings under which a rule could stop nothing, and a warm-start mode
// no one knows, are refused when the study is made, not carried along.
func TestUselessSettingsRefused(t *testing.T) {
	info := unitInfo(1)
	info.MaxStep = 27
	o := baseOptions(1)
	o.Pruning = Pruning{Rule: PrunerASHA, MinStep: 30, Eta: 3, Model: PruneModelLast}
	if _, err := NewStudy(context.Background(), info, o); err == nil || !strings.Contains(err.Error(), "could stop nothing") {
		t.Errorf("asha with min step 30 of 27: %v, want refused", err)
	}
	if err := (Options{WarmStartMode: "bogus"}).Validate(); err == nil {
		t.Error("an unknown warm-start mode without sources was accepted")
	}
}

// Ask/Tell with a database stores each Report as it comes: a study
// reopened mid-evaluation has the trial's curve and the pruner's stop
// (Trial.Stopping), goes on from them, and its Tell stores the trial
// pruned, bit for bit as the study that was never closed. A report whose
// write fails is not taken, and may be made again.
func TestAskTellReportReopened(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := baseOptions(3)
	o.Batch, o.Init, o.Iters = 1, 2, 2
	o.Pruning = Pruning{Rule: PrunerMedian}
	play := func(s *Study, reopen func() *Study) *Study {
		id := reportInitialDesign(t, s)
		for k, v := range []float64{2, 2.5} {
			if _, err := s.Report(ctx, id, k+1, v); err != nil {
				t.Fatal(err)
			}
		}
		if reopen != nil {
			s = reopen()
			in := s.InFlight()
			if len(in) != 1 || !in[0].Stopping || len(in[0].Intermediates) != 2 || in[0].Intermediates[1].Value != 2.5 {
				t.Fatalf("reopened in-flight trials: %+v", in)
			}
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			if _, err := s.Report(cancelled, id, 3, 9); err == nil {
				t.Fatal("a report whose write failed was accepted")
			}
		}
		if p, err := s.Report(ctx, id, 3, 2.25); !p || err != nil {
			t.Fatalf("step 3: prune %v, %v; want true (said at step 2)", p, err)
		}
		if err := s.Tell(ctx, id, 2.25, nil); err != nil {
			t.Fatal(err)
		}
		return s
	}
	ref, err := NewStudy(ctx, unitInfo(2), o)
	if err != nil {
		t.Fatal(err)
	}
	ref = play(ref, nil)
	o.DB, o.Name = wrap(db), "r"
	first, err := NewStudy(ctx, unitInfo(2), o)
	if err != nil {
		t.Fatal(err)
	}
	got := play(first, func() *Study {
		first.Close()
		s, err := OpenStudy(ctx, wrap(db), "r", Options{Proposer: testProposer()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	defer got.Close()
	sameTrials(t, ref.Trials(), got.Trials())
	for i, tr := range got.Trials() {
		if fmt.Sprint(tr.Intermediates) != fmt.Sprint(ref.Trials()[i].Intermediates) {
			t.Fatalf("trial %d curve %v, want %v", i, tr.Intermediates, ref.Trials()[i].Intermediates)
		}
	}
	stored, err := wrap(db).Trials(ctx, "r")
	if err != nil {
		t.Fatal(err)
	}
	last := stored[len(stored)-1]
	if last.Status != Pruned || last.Stopping || len(last.Intermediates) != 3 || last.Value != 2.25 {
		t.Fatalf("stored trial: %+v", last)
	}
}

// reportInitialDesign plays the two trials of a median-pruned study's
// initial design through Ask, Report and Tell, reporting 1, 2, 3 and 3,
// 4, 5 (medians 2, 3, 4; none pruned), and asks for the next trial,
// whose ID it returns.
func reportInitialDesign(t *testing.T, s *Study) int {
	t.Helper()
	ctx := context.Background()
	for i, base := range []float64{1, 3} {
		ts, err := s.Ask(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		for k := 1; k <= 3; k++ {
			if p, err := s.Report(ctx, ts[0].ID, k, base+float64(k-1)); p || err != nil {
				t.Fatalf("initial trial %d step %d: prune %v, %v", i, k, p, err)
			}
		}
		if err := s.Tell(ctx, ts[0].ID, base+2, nil); err != nil {
			t.Fatal(err)
		}
	}
	ts, err := s.Ask(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	return ts[0].ID
}

// gatedCurve is curveObjective whose first evaluation, after reporting
// its first three values, waits for release.
type gatedCurve struct {
	curveObjective
	once    *sync.Once
	release chan struct{}
}

func (o gatedCurve) Evaluate(ctx context.Context, x []float64) (float64, error) {
	first := false
	o.once.Do(func() { first = true })
	if !first {
		return o.curveObjective.Evaluate(ctx, x)
	}
	for k := 1; k <= 3; k++ {
		if _, err := sdk.Report(ctx, k, float64(k)); err != nil {
			return 0, err
		}
	}
	<-o.release
	return 3, nil
}

// During Run the values a pruned study's evaluation reports are stored as
// they come (the web view draws a running trial's curve), and the outcome
// stores the whole curve.
func TestRunReportsStoredAsTheyCome(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := pruningOptions()
	o.Iters, o.DB, o.Name = 1, wrap(db), "live"
	obj := gatedCurve{curveObjective{steps: 9}, new(sync.Once), make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := Optimize(ctx, obj, o)
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ts, err := wrap(db).Trials(ctx, "live")
		if err == nil && len(ts) > 0 && ts[0].Status == Running && len(ts[0].Intermediates) == 3 {
			if ts[0].Intermediates[2] != (Intermediate{Step: 3, Value: 3}) || ts[0].Stopping {
				t.Fatalf("running trial stored as %+v", ts[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running trial's reports were not stored: %+v, %v", ts, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(obj.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ts, err := wrap(db).Trials(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Status != Complete || len(ts[0].Intermediates) != 3 || ts[1].Status != Complete || len(ts[1].Intermediates) != 9 {
		t.Fatalf("finished trials stored as %+v and %+v", ts[0], ts[1])
	}
}

// staleCurve's first attempt outlives its time limit and reports after
// it; the retry reports steps 1 and 2.
type staleCurve struct {
	curveObjective
	calls *atomic.Int32
	late  chan error
}

func (o staleCurve) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if o.calls.Add(1) == 1 {
		time.Sleep(300 * time.Millisecond) // past EvalTimeout: abandoned
		_, err := sdk.Report(ctx, 5, 99)
		o.late <- err
		return 99, nil
	}
	for k := 1; k <= 2; k++ {
		if _, err := sdk.Report(ctx, k, float64(k)); err != nil {
			return 0, err
		}
	}
	return 2, nil
}

// A report from an abandoned attempt (timed out, its goroutine still
// running) is refused: it never reaches the retry's stored curve.
func TestAbandonedAttemptReportRefused(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := pruningOptions()
	o.Init, o.Iters, o.DB, o.Name = 1, 0, wrap(db), "stale"
	o.EvalTimeout, o.Retries, o.RetryBackoff = 100*time.Millisecond, 1, time.Millisecond
	obj := staleCurve{curveObjective{steps: 9}, new(atomic.Int32), make(chan error, 1)}
	if _, err := Optimize(ctx, obj, o); err != nil {
		t.Fatal(err)
	}
	if err := <-obj.late; !errors.Is(err, ErrNotInFlight) {
		t.Fatalf("the abandoned attempt's report: %v, want ErrNotInFlight", err)
	}
	ts, err := wrap(db).Trials(ctx, "stale")
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Status != Complete || ts[0].Value != 2 || fmt.Sprint(ts[0].Intermediates) != "[{1 1} {2 2}]" {
		t.Fatalf("stored %+v", ts[0])
	}
}

// liarCurve reports like curveObjective but, told to stop, returns 999
// (mode "lie"), or ignores the stop and runs to the last step ("ignore").
type liarCurve struct {
	curveObjective
	mode string
}

func (o liarCurve) Evaluate(ctx context.Context, x []float64) (float64, error) {
	q := 1 - (x[0]-0.3)*(x[0]-0.3) - (x[1]-0.3)*(x[1]-0.3)
	var v float64
	stopped := false
	for k := 1; k <= o.steps; k++ {
		v = q * (1 - math.Exp(-float64(k)/3))
		prune, err := sdk.Report(ctx, k, v)
		if err != nil {
			return 0, err
		}
		if prune && o.mode == "lie" {
			return 999, nil
		}
		stopped = stopped || prune
	}
	if stopped && o.mode == "ignore" {
		return v, nil
	}
	return v, nil
}

// A trial told to stop is stored pruned with the last value it reported,
// whatever the objective returns after the stop; one that ignores the
// stop and reports the last step ran in full and is complete. A report
// past the objective's MaxStep is refused.
func TestPrunedValueIsLastReport(t *testing.T) {
	ctx := context.Background()
	res, err := Optimize(ctx, liarCurve{curveObjective{steps: 9}, "lie"}, pruningOptions())
	if err != nil {
		t.Fatal(err)
	}
	if n := checkPruned(t, res.Trials, 9); n == 0 {
		t.Fatal("nothing pruned: the case needs a stop")
	}
	res, err = Optimize(ctx, liarCurve{curveObjective{steps: 9}, "ignore"}, pruningOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Status != Complete || len(tr.Intermediates) != 9 {
			t.Fatalf("trial %d that ran to the last step: %s with %d values", tr.ID, tr.Status, len(tr.Intermediates))
		}
	}
	o := pruningOptions()
	s, err := NewStudy(ctx, curveInfo(9), o)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := s.Ask(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Report(ctx, ts[0].ID, 10, 1); err == nil || !strings.Contains(err.Error(), "past the objective's last step (sdk.Info.MaxStep) 9") {
		t.Fatalf("a report at step 10 of 9: %v", err)
	}
}

// curveInfo is curveObjective's Info for steps steps.
func curveInfo(steps int) sdk.Info {
	i, _ := curveObjective{steps: steps}.Info(context.Background())
	return i
}

// A pruned study resumed with an objective whose last step changed is
// refused before anything is evaluated: its trials' steps would mean
// another training length.
func TestResumeRefusesChangedMaxStep(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	o := pruningOptions()
	o.DB, o.Name, o.Grace, o.Iters = db, "s", -1, 2
	if _, err := Optimize(ctx, curveObjective{steps: 9}, o); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStudy(ctx, db, "s", Options{Iters: 4, Proposer: randomProposer{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Run(ctx, curveObjective{steps: 18})
	if !errors.Is(err, ErrObjectiveChanged) || !strings.Contains(err.Error(), "its last step (MaxStep) is 18, the study's 9") {
		t.Fatalf("resume with MaxStep 18: %v", err)
	}
}

// Pruner settings that could stop nothing, or that name steps past the
// objective's last, are refused.
func TestPrunerStepsBeyondMaxStepRefused(t *testing.T) {
	info := curveInfo(10)
	for _, c := range []struct {
		p    Pruning
		want string
	}{
		{Pruning{Rule: PrunerMedian, WarmupSteps: 50}, "warm-up of 50 steps reaches the last step of a full evaluation, 10"},
		{Pruning{Rule: PrunerASHA, MaxStep: 200, MinStep: 1, Eta: 3}, "max step 200 is past the objective's last step (MaxStep) 10"},
	} {
		if _, err := c.p.pruner(info); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
	if _, err := (Pruning{Rule: PrunerMedian, WarmupSteps: 9}).pruner(info); err != nil {
		t.Errorf("warm-up 9 of 10: %v", err)
	}
}

// A pruner's max step below the objective's MaxStep leaves the objective
// free to report up to its own last step (the first fix refused it, and
// every evaluation failed).
func TestPrunerMaxStepBelowObjectives(t *testing.T) {
	o := pruningOptions()
	o.Pruning = Pruning{Rule: PrunerASHA, MinStep: 1, Eta: 3, MaxStep: 9, Model: PruneModelLast}
	res, err := Optimize(context.Background(), curveObjective{steps: 10}, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Status == Failed {
			t.Fatalf("trial %d failed: %s", tr.ID, tr.Error)
		}
	}
}
