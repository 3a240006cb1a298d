package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
)

// neighbourErr is what a plugin host reports for an evaluation stopped
// because another evaluation took the shared process down.
type neighbourErr struct{}

func (neighbourErr) Error() string        { return "killed with a neighbour" }
func (neighbourErr) NeighbourFault() bool { return true }

// Evaluations stopped by a neighbour's fault are re-run without counting
// as attempts (so with no retries a healthy evaluation still completes),
// but at most maxNeighbourReruns times (so a process that always dies
// cannot keep a trial running).
func TestNeighbourFaultRerun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults int64 // neighbour faults per trial before it succeeds
		want   Status
	}{
		{"re-run completes", 2, Complete},
		{"bounded", maxNeighbourReruns + 1, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := map[float64]int64{}
			obj := funcObjective{info: unitInfo(1), f: func(ctx context.Context, x []float64) (float64, error) {
				mu.Lock()
				defer mu.Unlock()
				calls[x[0]]++
				if calls[x[0]] <= tc.faults {
					return 0, fmt.Errorf("plugin: %w", neighbourErr{})
				}
				return x[0], nil
			}}
			res, err := Optimize(context.Background(), obj, Options{Proposer: randomProposer{}, Batch: 1, Iters: 1, Init: 2, Retries: 0})
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range res.Trials {
				if tr.Status != tc.want || tr.Attempts != 1 {
					t.Fatalf("trial %d: %v after %d attempts (%s), want %v after 1", tr.ID, tr.Status, tr.Attempts, tr.Error, tc.want)
				}
				if n := calls[tr.X[0]]; n != min(tc.faults+1, maxNeighbourReruns+1) {
					t.Fatalf("trial %d evaluated %d times", tr.ID, n)
				}
			}
		})
	}
}

// stopRunErr is an evaluation error that stops the run (RunStopper), as
// the loader's for a plugin that changed while in use.
type stopRunErr struct{}

func (stopRunErr) Error() string  { return "the plugin changed" }
func (stopRunErr) StopsRun() bool { return true }

// An evaluation error that stops the run (RunStopper) ends Optimize with
// it at once: the trial is not recorded as failed but left for resume,
// and no later trial is evaluated.
func TestRunStopperStopsTheRun(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	var calls atomic.Int32
	obj := funcObjective{info: unitInfo(1), f: func(_ context.Context, x []float64) (float64, error) {
		if calls.Add(1) == 3 {
			return 0, stopRunErr{}
		}
		return -x[0] * x[0], nil
	}}
	o := Options{DB: wrap(db), Name: "s", Acquisition: "random", Init: 2, Iters: 4, Seed: 1, Grace: -1}
	_, err := Optimize(ctx, obj, o)
	if !errors.As(err, new(stopRunErr)) {
		t.Fatalf("Optimize: %v, want the run stopped by the RunStopper", err)
	}
	ts, err := db.Trials(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		if tr.Status == "failed" {
			t.Fatalf("trial %d recorded as failed: %+v", tr.ID, tr)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d evaluations, want the run stopped at the third", n)
	}
}

// countingCarrier is an acquisition with carried state (acq.Carrier): a
// counter that each proposal advances and shifts its points by. With
// failNext set, a proposal advances the counter and then fails, as a
// proposal cancelled after TES replaced its trusted maximizers does.
type countingCarrier struct {
	n      int
	cancel context.CancelFunc // non-nil: cancel the Ask's context after advancing
}

func (c *countingCarrier) Propose(ctx context.Context, s *acq.State, q int) (*mat.Dense, error) {
	c.n++
	if c.cancel != nil {
		c.cancel()
		return nil, ctx.Err()
	}
	X := mat.NewDense(q, s.GP.Dim(), nil)
	for i := range q {
		for j := range s.GP.Dim() {
			X.Set(i, j, math.Mod(s.Rand.Float64()+0.1*float64(c.n), 1))
		}
	}
	return X, nil
}

func (c *countingCarrier) CarriedState() ([]byte, error) { return json.Marshal(c.n) }
func (c *countingCarrier) RestoreState(b []byte) error {
	c.n = 0
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, &c.n)
}

// A proposal that fails after the acquisition ran (cancelled, say) leaves
// no trace: the study, asked again in the same process, goes on exactly
// as an uninterrupted one (and as one reopened from the database). Here
// the Ask's context is cancelled once the acquisition has advanced its
// carried state.
func TestFailedProposalLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	run := func(failAt int) []Trial {
		c := &countingCarrier{}
		s, err := NewStudy(ctx, unitInfo(2), Options{Proposer: c, Acquisition: "counting", Init: 2, Iters: 5, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		for i, asked := 0, 0; asked < 7; i++ { // the design's 2 points, 5 iterations
			actx, cancel := context.WithCancel(ctx)
			c.cancel = nil
			if i == failAt {
				c.cancel = cancel
			}
			ts, err := s.Ask(actx, 1)
			cancel()
			if err != nil {
				if i != failAt {
					t.Fatalf("ask %d: %v", i, err)
				}
				continue
			}
			asked++
			for _, tr := range ts {
				if err := s.Tell(ctx, tr.ID, -tr.X[0]*tr.X[0], nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		return s.Trials()
	}
	want := run(-1)
	sameTrials(t, want, run(4))
}

// An objective whose Info panics makes Optimize return an error, as a
// panicking evaluation makes a failed trial, rather than crash the caller.
func TestInfoPanicIsAnError(t *testing.T) {
	obj := panicInfo{}
	if _, err := Optimize(context.Background(), obj, Options{Acquisition: "random", Init: 1, Iters: 1}); err == nil || !strings.Contains(err.Error(), "objective info: panicked: boom") {
		t.Fatalf("Optimize: %v, want the panic as an error", err)
	}
}

type panicInfo struct{}

func (panicInfo) Info(context.Context) (sdk.Info, error)               { panic("boom") }
func (panicInfo) Evaluate(context.Context, []float64) (float64, error) { return 0, nil }

// A panic in Options.OnTrial or OnIteration, which run on the study's
// goroutines out of the caller's recover, is Run's error, not the end of
// the process.
func TestCallbackPanicIsAnError(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
	}{
		{"OnTrial", Options{OnTrial: func(Trial) { panic("trial boom") }}},
		{"OnIteration", Options{OnIteration: func(Record) { panic("iteration boom") }}},
	} {
		o := c.o
		o.Acquisition, o.Init, o.Iters = "random", 2, 2
		_, err := Optimize(context.Background(), funcObjective{info: unitInfo(1), f: func(_ context.Context, x []float64) (float64, error) { return x[0], nil }}, o)
		if err == nil || !strings.Contains(err.Error(), "Options."+c.name+" panicked") {
			t.Errorf("%s: Optimize: %v, want the panic as its error", c.name, err)
		}
	}
}

// Telling a trial that cannot be told says which mistake it is: no such
// trial, or one already finished (both wrap ErrNotInFlight).
func TestTellSaysWhy(t *testing.T) {
	ctx := context.Background()
	s, tr := oneTrialStudy(t)
	if err := s.Tell(ctx, tr.ID, 1, nil); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int]string{tr.ID: "it is already complete", 9: "the study has no trial 9", -1: "the study has no trial -1"} {
		if err := s.Tell(ctx, id, 1, nil); !errors.Is(err, ErrNotInFlight) || !strings.Contains(err.Error(), want) {
			t.Errorf("Tell(%d): %v, want ErrNotInFlight saying %q", id, err, want)
		}
	}
}

// A second Run of a Study while the first is under way is refused, rather
// than both evaluating the same trials (the doc forbids it; a guard costs
// nothing).
func TestConcurrentRunRefused(t *testing.T) {
	ctx := context.Background()
	s, err := NewStudy(ctx, unitInfo(1), Options{Acquisition: "random", Init: 2, Iters: 1})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{}, 4)
	obj := funcObjective{info: unitInfo(1), f: func(context.Context, []float64) (float64, error) {
		started <- struct{}{}
		<-release
		return 0, nil
	}}
	done := make(chan error, 1)
	go func() { _, err := s.Run(ctx, obj); done <- err }()
	<-started
	if _, err := s.Run(ctx, obj); err == nil || !strings.Contains(err.Error(), "running already") {
		t.Errorf("second Run: %v, want refused", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("first Run: %v", err)
	}
}
