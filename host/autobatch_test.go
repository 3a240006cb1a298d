package host

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// bumps is a d=2 objective on [0,1]² with n×n separated bumps of equal
// height (many modes, each a plausible maximizer).
func bumps(n int) funcObjective {
	return funcObjective{info: unitInfo(2), f: func(_ context.Context, x []float64) (float64, error) {
		v := 0.0
		for i := range n {
			for j := range n {
				cx, cy := (float64(i)+0.5)/float64(n), (float64(j)+0.5)/float64(n)
				dx, dy := x[0]-cx, x[1]-cy
				v += math.Exp(-(dx*dx + dy*dy) / (2 * 0.08 * 0.08))
			}
		}
		return v, nil
	}}
}

// bowl is a unimodal d=2 objective on [0,1]²: one broad maximum.
func bowl() funcObjective {
	return funcObjective{info: unitInfo(2), f: func(_ context.Context, x []float64) (float64, error) {
		dx, dy := x[0]-0.3, x[1]-0.6
		return -(dx*dx + dy*dy), nil
	}}
}

// firstBatch evaluates a new study's initial design with Ask/Tell and
// returns the size of its first BO batch.
func firstBatch(t *testing.T, obj funcObjective, o Options) int {
	t.Helper()
	ctx := context.Background()
	s, err := NewStudy(ctx, obj.info, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	design, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range design {
		v, _ := obj.f(ctx, tr.X)
		if err := s.Tell(ctx, tr.ID, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	batch, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(batch)
}

// batchSizes returns the sizes of a study's BO iterations, in order.
func batchSizes(r *Result) []int {
	var out []int
	for _, t := range r.Trials {
		if t.Iteration == 0 {
			continue
		}
		for len(out) < t.Iteration {
			out = append(out, 0)
		}
		out[t.Iteration-1]++
	}
	return out
}

// With the model sure of one maximum, one point is worth evaluating; with
// many separated modes equally likely to hold x*, TES's α keeps growing
// with the batch, so the batch grows. tes-ep shows the rule on the GP as
// fitted; tes (the same rule, after x̄) fits a warped GP, which the bowl's
// long lower tail leaves less sure of its maximum on this design (mean
// first batch 3.25 on the bowl against 5.25 with 9 modes when measured), so
// it is only checked to propose clearly more with 9 modes.
func TestAutoBatchSizes(t *testing.T) {
	for _, acqName := range []string{"tes-ep", "tes"} {
		t.Run(acqName, func(t *testing.T) {
			t.Parallel()
			mean := func(obj funcObjective) float64 {
				sum := 0
				for seed := range uint64(4) {
					o := Options{Acquisition: acqName, AutoBatch: true, Batch: 8, Init: 40, Seed: seed}
					n := firstBatch(t, obj, o)
					t.Logf("seed %d: %d", seed, n)
					sum += n
				}
				return float64(sum) / 4
			}
			many, one := mean(bumps(3)), mean(bowl())
			t.Logf("mean first batch: %.2f with 9 modes, %.2f with one", many, one)
			if acqName == "tes" && many < one+1.5 {
				t.Errorf("mean first batch %.2f with 9 modes, %.2f with one: want at least 1.5 more with 9 modes", many, one)
			}
			if acqName == "tes-ep" && (many < 4 || one > 2) {
				t.Errorf("mean first batch %.2f with 9 modes, %.2f with one: want ≥ 4 and ≤ 2", many, one)
			}
		})
	}
}

// An AutoBatch study interrupted mid-iteration, or extended with more
// iterations, ends with exactly the trials of one uninterrupted run: the
// sizes are re-derived from the stored data and the iteration's stream.
// (No budget of this seed cuts a batch: TestAutoBatchExtendCut.)
func TestAutoBatchResumeExact(t *testing.T) {
	t.Parallel() // its own studies and databases; runs beside the other long ones
	ctx := context.Background()
	opts := func() Options {
		// SE: with it this seed's sizes vary, which the test needs.
		return Options{Acquisition: "tes", AutoBatch: true, Batch: 4, Iters: 4, Init: 24, Seed: 3, Grace: -1, Kernel: KernelSE}
	}
	want, err := Optimize(ctx, hartmann6(), opts())
	if err != nil {
		t.Fatal(err)
	}
	sizes := batchSizes(want)
	t.Logf("sizes %v", sizes)
	// The budget is Init + Iters × Batch evaluations, however many
	// iterations that takes.
	sum := 0
	for _, n := range sizes {
		sum += n
	}
	if sum != 4*4 || !slices.ContainsFunc(sizes, func(n int) bool { return n < 4 }) {
		t.Fatalf("sizes %v: want 16 BO evaluations, some batches smaller than the largest", sizes)
	}
	t.Run("interrupted", func(t *testing.T) {
		stopAt := int64(24 + sizes[0] + 1) // inside iteration 2 (or at its end)
		path := interruptedStudy(t, hartmann6(), opts(), stopAt)
		sameTrials(t, want.Trials, reopenAndRun(t, path, Options{}, hartmann6()))
	})
	t.Run("extended", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.db")
		db := openDB(t, path, true)
		o := opts()
		o.DB, o.Name, o.Iters = wrap(db), "st", 2
		if _, err := Optimize(ctx, hartmann6(), o); err != nil {
			t.Fatal(err)
		}
		db.Close()
		sameTrials(t, want.Trials, reopenAndRun(t, path, Options{Iters: 4}, hartmann6()))
		// Its budget of 4 iterations took 5: reopened with that budget
		// again, it is complete, not below the iterations run.
		sameTrials(t, want.Trials, reopenAndRun(t, path, Options{Iters: 4}, hartmann6()))
	})
}

// A batch the budget cut (the sizes here are 2 4 4 4 4 2 for a budget of
// 5 iterations: every shorter budget of 4k BO evaluations cuts a batch of
// 4 to 2) keeps the points it left out (modelState.Cut), and the study
// extended from that budget issues them first: it ends with exactly the
// trials of the uninterrupted longer run. Before, the cut batch stayed
// cut and every later trial differed.
func TestAutoBatchExtendCut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := Options{Acquisition: "tes", AutoBatch: true, Batch: 4, Iters: 5, Init: 2, Seed: 1, Grace: -1}
	want, err := Optimize(ctx, hartmann6(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if sizes := batchSizes(want); !slices.Equal(sizes, []int{2, 4, 4, 4, 4, 2}) {
		t.Fatalf("sizes %v, want 2 4 4 4 4 2 (the test needs cut batches)", sizes)
	}
	for _, short := range []int{1, 3} {
		t.Run(fmt.Sprintf("from %d iterations", short), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			db := openDB(t, path, true)
			o := opts
			o.DB, o.Name, o.Iters = wrap(db), "st", short
			res, err := Optimize(ctx, hartmann6(), o)
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			if sizes := batchSizes(res); sizes[len(sizes)-1] != 2 || len(res.Trials) != 2+4*short {
				t.Fatalf("sizes %v, %d trials: want the budget's %d, the last batch cut to 2", sizes, len(res.Trials), 2+4*short)
			}
			sameTrials(t, want.Trials, reopenAndRun(t, path, Options{Iters: 5}, hartmann6()))
		})
	}
}

func TestAutoBatchRefusesOtherAcquisitions(t *testing.T) {
	_, err := NewStudy(context.Background(), unitInfo(2), Options{Acquisition: "qei", AutoBatch: true})
	if err == nil || !strings.Contains(err.Error(), "cannot size its batches") {
		t.Fatalf("qei with AutoBatch: %v", err)
	}
	s, err := NewStudy(context.Background(), unitInfo(2), Options{AutoBatch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if b := s.Settings().Batch; b != DefaultBatchMax {
		t.Errorf("default largest batch %d, want %d", b, DefaultBatchMax)
	}
}

// In worker mode an AutoBatch study's proposals are sized by information
// gain and capped by the idle slots; the budget stays Init + Iters × Batch
// evaluations.
func TestAutoBatchWorkers(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, filepath.Join(t.TempDir(), "w.db"))
	info, _ := (&branin{}).Info(ctx)
	s, err := NewStudy(ctx, info, Options{DB: wrap(db), Name: "auto", AutoBatch: true, Batch: 4, Iters: 3, Init: 3, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			res, err := RunWorker(ctx, wrap(db), "auto", &branin{}, WorkerOptions{Parallel: 2, Poll: 5 * time.Millisecond})
			if err != nil || !res.Done {
				t.Errorf("worker: %+v %v", res, err)
			}
		})
	}
	wg.Wait()
	trials := checkComplete(t, db, "auto", 3+3*4)
	per := map[int]int{}
	for _, tr := range trials {
		if tr.Iteration > 0 {
			per[tr.Iteration]++
		}
	}
	for it, n := range per {
		if n > 4 {
			t.Errorf("iteration %d proposed %d points, more than 4 slots", it, n)
		}
	}
}
