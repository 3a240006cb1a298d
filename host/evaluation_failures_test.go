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

func TestFailuresRetriesTimeouts(t *testing.T) {
	ctx := context.Background()
	obj := funcObjective{info: unitInfo(2), f: func(ctx context.Context, x []float64) (float64, error) {
		switch {
		case x[0] < 0.2: // always fails
			return 0, errors.New("bad region")
		case x[0] < 0.4:
			return math.NaN(), nil
		case x[0] < 0.5: // hangs past the timeout, ignoring ctx
			time.Sleep(300 * time.Millisecond)
			return 1, nil
		}
		return -(x[0] - 0.7) * (x[0] - 0.7), nil
	}}
	o := Options{Proposer: randomProposer{}, Batch: 3, Iters: 5, Init: 4, Seed: 3, Retries: 1,
		RetryBackoff: time.Millisecond, EvalTimeout: 50 * time.Millisecond}
	res, err := Optimize(ctx, obj, o)
	if err != nil {
		t.Fatal(err)
	}
	var failed, complete int
	for _, tr := range res.Trials {
		switch {
		case tr.X[0] < 0.2:
			if tr.Status != Failed || !strings.Contains(tr.Error, "bad region") || tr.Attempts != 2 {
				t.Errorf("trial %+v", tr)
			}
		case tr.X[0] < 0.4:
			if tr.Status != Failed || !strings.Contains(tr.Error, "NaN") {
				t.Errorf("NaN trial %+v", tr)
			}
		case tr.X[0] < 0.5:
			if tr.Status != Failed || !strings.Contains(tr.Error, "timed out") {
				t.Errorf("slow trial %+v", tr)
			}
		default:
			if tr.Status != Complete || tr.Attempts != 1 {
				t.Errorf("good trial %+v", tr)
			}
		}
		if tr.Status == Failed {
			failed++
		} else {
			complete++
		}
	}
	if failed == 0 || complete == 0 || len(res.Trials) != 4+15 || res.Failures != failed {
		t.Fatalf("%d trials, %d failed, %d complete", len(res.Trials), failed, complete)
	}
}

// Retries recover transient failures.
func TestRetryRecovers(t *testing.T) {
	var calls atomic.Int64
	obj := funcObjective{info: unitInfo(1), f: func(ctx context.Context, x []float64) (float64, error) {
		if calls.Add(1)%2 == 1 {
			return 0, errors.New("transient")
		}
		return x[0], nil
	}}
	res, err := Optimize(context.Background(), obj, Options{Proposer: randomProposer{}, Batch: 1, Parallel: 1, Iters: 3, Init: 2, Retries: 2, RetryBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Status != Complete || tr.Attempts != 2 {
			t.Fatalf("trial %+v", tr)
		}
	}
}

// An objective that fails everywhere: every batch fails, the study still
// runs all its iterations (space-filling fallback) and records them.
func TestAllFailedContinues(t *testing.T) {
	obj := funcObjective{info: unitInfo(2), f: func(context.Context, []float64) (float64, error) {
		return 0, errors.New("down")
	}}
	var recs []Record
	res, err := Optimize(context.Background(), obj, Options{Proposer: testProposer(), Batch: 2, Iters: 3, Init: 2,
		OnIteration: func(r Record) { recs = append(recs, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 8 || res.Failures != 8 || len(recs) != 3 {
		t.Fatalf("%d trials, %d failures, %d records", len(res.Trials), res.Failures, len(recs))
	}
	for _, r := range recs {
		if r.BestValue != nil || r.BestX != nil || r.Values[0] != nil || r.Evals != 0 {
			t.Fatalf("record %+v", r)
		}
	}
	for i, a := range res.Trials {
		for _, b := range res.Trials[:i] {
			if fmt.Sprint(a.U) == fmt.Sprint(b.U) {
				t.Fatalf("duplicate points %v", a.U)
			}
		}
	}
}

// A failing acquisition falls back to space-filling points; the study goes on.
func TestProposerFailureFallsBack(t *testing.T) {
	res, err := Optimize(context.Background(), &branin{}, Options{Proposer: failingProposer{}, Batch: 2, Iters: 2, Init: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 6 || res.Failures != 0 {
		t.Fatalf("%d trials %d failures", len(res.Trials), res.Failures)
	}
}

// Cancellation: the run stops, evaluations that finish within the grace
// period are recorded, the others stay in flight, and Run says so. The
// objective decides fast or slow by the order in which evaluations start
// (the first three of the batch of six are fast), so both cases occur
// whatever points the seed gives.
func TestCancelGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{}, 10)
	var mu sync.Mutex
	var order int
	fast := map[uint64]bool{} // x[0]'s bits → evaluated as fast
	obj := funcObjective{info: unitInfo(1), f: func(ectx context.Context, x []float64) (float64, error) {
		mu.Lock()
		order++
		isFast := order <= 3
		fast[math.Float64bits(x[0])] = isFast
		mu.Unlock()
		started <- struct{}{}
		if isFast {
			time.Sleep(20 * time.Millisecond) // finishes within the grace period
			return x[0], nil
		}
		<-ectx.Done() // finishes only when abandoned
		return 0, ectx.Err()
	}}
	o := Options{Proposer: randomProposer{}, NoInit: true, Batch: 6, Iters: 1, Seed: 2, Grace: 300 * time.Millisecond}
	go func() {
		for range 6 {
			<-started
		}
		cancel()
	}()
	t0 := time.Now()
	res, err := Optimize(ctx, obj, o)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("got %v", err)
	}
	if el := time.Since(t0); el > 5*time.Second {
		t.Fatalf("cancel took %v", el)
	}
	var nFast, nSlow int
	for _, tr := range res.Trials {
		isFast, ok := fast[math.Float64bits(tr.X[0])]
		switch {
		case !ok:
			t.Fatalf("trial %d was never evaluated: %+v", tr.ID, tr)
		case isFast:
			nFast++
			if tr.Status != Complete || tr.Value != tr.X[0] {
				t.Errorf("fast trial not recorded within grace: %+v", tr)
			}
		default:
			nSlow++
			if tr.Status.Done() {
				t.Errorf("slow trial should stay in flight: %+v", tr)
			}
		}
	}
	if nFast != 3 || nSlow != 3 || res.Evaluations != 3 || len(res.Trials) != 6 {
		t.Fatalf("%d fast and %d slow of %d trials, %d evaluations; want 3, 3, 6, 3", nFast, nSlow, len(res.Trials), res.Evaluations)
	}
}

// startupObjective bounds its own evaluations like a loader objective: each
// call first waits startup (a plugin process being restarted), then runs
// for run; its own limit, call, counts from after the start-up.
type startupObjective struct {
	funcObjective
	startup, run, call time.Duration
}

func (o startupObjective) EvalLimits() (call, startup time.Duration) { return o.call, 2 * o.startup }

func (o startupObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	select {
	case <-time.After(o.startup + o.run):
		return x[0], nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// An objective that bounds its evaluations itself gets its start-up time on
// top of the host's limit: an evaluation that runs within the limit once
// the objective is ready completes although start-up and run together
// exceed the limit, and the same objective without EvalLimits times out.
func TestEvalLimitLeavesStartup(t *testing.T) {
	ctx := context.Background()
	limit := 100 * time.Millisecond
	slow := startupObjective{funcObjective: funcObjective{info: unitInfo(1)},
		startup: 150 * time.Millisecond, run: 20 * time.Millisecond, call: limit}
	o := Options{Proposer: randomProposer{}, Iters: 1, Init: 2, Seed: 1, EvalTimeout: limit}
	res, err := Optimize(ctx, slow, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if tr.Status != Complete {
			t.Fatalf("trial %d: %v %q, want complete (start-up must not count against the limit)", tr.ID, tr.Status, tr.Error)
		}
	}
	// Without EvalLimits, and with an objective limit above the host's, the
	// host's limit counts everything.
	for name, obj := range map[string]sdk.Objective{
		"no EvalLimits":         struct{ funcObjective }{funcObjective{info: unitInfo(1), f: slow.Evaluate}},
		"objective limit above": startupObjective{funcObjective: slow.funcObjective, startup: slow.startup, run: slow.run, call: 2 * limit},
	} {
		res, err := Optimize(ctx, obj, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tr := res.Trials[0]; tr.Status != Failed || !strings.Contains(tr.Error, "timed out after 100ms") {
			t.Errorf("%s: trial 0 %v %q, want timed out after 100ms", name, tr.Status, tr.Error)
		}
	}
}
