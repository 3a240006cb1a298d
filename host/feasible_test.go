package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tesbo/tesbo/store"
)

// issue14Objective is the objective of issue 14: it fails for x < 0.3,
// hangs until its context ends for x > 0.8 (so every such evaluation times
// out), and peaks at 0.6. Failed evaluations never reach the GP, so its
// uncertainty in the failing regions never shrinks and, without a model
// of the failures, acquisitions keep proposing there (5 seeds, 12
// iterations: 28, 12 and 4 of 60 tes, tes-ep and ei proposals in
// [0.3, 0.8]; with it 59, 57 and 54 under the SE kernel; 58 of 60 tes and 49 ei proposals under Matérn-5/2).
func issue14Objective() funcObjective {
	return funcObjective{info: unitInfo(1), f: func(ctx context.Context, x []float64) (float64, error) {
		switch {
		case x[0] < 0.3:
			return 0, errors.New("objective undefined below 0.3")
		case x[0] > 0.8:
			<-ctx.Done()
			return 0, ctx.Err()
		}
		return -(x[0] - 0.6) * (x[0] - 0.6), nil
	}}
}

// Once the host learns where evaluations fail, most BO proposals land in
// [0.3, 0.8] (pooled over seeds 1–5: one seed's 12 proposals are too few to
// tell an acquisition's habit from its luck), and a rerun with the same
// seed gives bitwise the same trials.
func TestProposalsAvoidFailingRegions(t *testing.T) {
	for _, name := range []string{"tes", "tes-ep", "ei"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			inside, total := 0, 0
			var first *Result
			for seed := uint64(1); seed <= 5; seed++ {
				o := Options{Acquisition: name, Iters: 12, Init: 4, Seed: seed, EvalTimeout: 50 * time.Millisecond}
				res, err := Optimize(context.Background(), issue14Objective(), o)
				if err != nil {
					t.Fatal(err)
				}
				if first == nil {
					first = res
				}
				var xs []float64
				for _, tr := range res.Trials {
					if tr.Iteration == 0 {
						continue
					}
					xs = append(xs, tr.U[0])
					total++
					if tr.U[0] >= 0.3 && tr.U[0] <= 0.8 {
						inside++
					}
				}
				t.Logf("seed %d: BO proposals %.3f", seed, xs)
			}
			if inside*4 < total*3 {
				t.Errorf("only %d of %d BO proposals in [0.3, 0.8], want ≥ 75%%", inside, total)
			}
			o := Options{Acquisition: name, Iters: 12, Init: 4, Seed: 1, EvalTimeout: 50 * time.Millisecond}
			again, err := Optimize(context.Background(), issue14Objective(), o)
			if err != nil {
				t.Fatal(err)
			}
			for i, tr := range again.Trials {
				if math.Float64bits(tr.U[0]) != math.Float64bits(first.Trials[i].U[0]) || tr.Status != first.Trials[i].Status {
					t.Fatalf("rerun with the same seed differs at trial %d: %v %v, first run %v %v", i, tr.U, tr.Status, first.Trials[i].U, first.Trials[i].Status)
				}
			}
		})
	}
}

// A proposer that ignores State.Feasible (here: always the same failing
// point) has its points replaced once the classifier puts them below the
// floor.
func TestHostReplacesProposalsBelowFloor(t *testing.T) {
	o := Options{Proposer: constProposer{u: 0.05}, Iters: 6, Init: 4, Seed: 2, EvalTimeout: 50 * time.Millisecond}
	res, err := Optimize(context.Background(), issue14Objective(), o)
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, tr := range res.Trials {
		if tr.Iteration > 0 && tr.U[0] < 0.1 {
			at++
		}
	}
	// The first BO proposal may land there (the design need not have
	// failed near 0.05); after that failure the floor holds.
	if at > 1 {
		t.Errorf("%d of 6 BO proposals at the known failing point 0.05, want ≤ 1", at)
	}
}

// A study with failures interrupted and resumed ends with the trials of an
// uninterrupted run: the classifier is refitted from the stored trials.
func TestFailureAwareResumeExact(t *testing.T) {
	ctx := context.Background()
	opts := func() Options {
		return Options{Acquisition: "ei", Iters: 6, Init: 4, Seed: 3, EvalTimeout: 50 * time.Millisecond}
	}
	want, err := Optimize(ctx, issue14Objective(), opts())
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for _, tr := range want.Trials {
		if tr.Status == Failed {
			failed++
		}
	}
	if failed == 0 {
		t.Fatal("no evaluation failed: the test does not exercise the classifier")
	}
	for _, stopAfter := range []int64{5, 8} {
		t.Run(fmt.Sprint(stopAfter), func(t *testing.T) {
			db, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			o := opts()
			o.DB, o.Name, o.Grace = wrap(db), "st", -1
			cctx, cancel := context.WithCancel(ctx)
			defer cancel()
			var n atomic.Int64
			o.OnTrial = func(Trial) {
				if n.Add(1) == stopAfter {
					cancel()
				}
			}
			if _, err := Optimize(cctx, issue14Objective(), o); !errors.Is(err, context.Canceled) {
				t.Fatalf("interrupted run: %v", err)
			}
			s, err := OpenStudy(ctx, wrap(db), "st", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(ctx, issue14Objective()); err != nil {
				t.Fatal(err)
			}
			sameTrials(t, want.Trials, s.Trials())
		})
	}
}
