package host

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Every registered acquisition resumes bitwise: a study interrupted in the
// middle of an iteration and reopened, and a finished study extended with a
// larger iteration budget, end with exactly the trials of one uninterrupted
// run. Acquisitions that carry state between iterations (TES's previous
// trusted maximizers) must store it (acq.Carrier) for this to hold.
//
// One study goes through both: interrupted while its 6th trial finishes
// (during iteration 2) with a budget of 3 iterations, resumed — the new
// process re-runs iteration 2's other point and proposes iteration 3 —,
// then extended to 6 iterations by another. Separate interrupted and
// extended studies had each re-done the first iterations from scratch: a
// third more work (tes-sp alone took minutes) for the same comparisons.
func TestResumeExactEveryAcquisition(t *testing.T) {
	ctx := context.Background()
	for _, name := range oneValueAcquisitions(t) { // several outputs: TestFourObjectivesResumeExact and others
		if strings.HasPrefix(name, "test-") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			opts := func() Options {
				return Options{Acquisition: name, Batch: 2, Iters: 6, Init: 3, Seed: 11, Grace: -1}
			}
			want, err := Optimize(ctx, hartmann6(), opts())
			if err != nil {
				t.Fatal(err)
			}
			short := opts()
			short.Iters = 3
			path := interruptedStudy(t, hartmann6(), short, 6)
			resumed := t.Run("interrupted", func(t *testing.T) {
				sameTrials(t, throughIteration(want.Trials, 3), reopenAndRun(t, path, Options{}, hartmann6()))
			})
			t.Run("extended", func(t *testing.T) {
				if !resumed {
					t.Skip("the interrupted study did not resume exactly (above)")
				}
				sameTrials(t, want.Trials, reopenAndRun(t, path, Options{Iters: 6}, hartmann6()))
			})
		})
	}
}

// throughIteration returns the trials of iterations up to last (the
// initial design is iteration 0).
func throughIteration(trials []Trial, last int) []Trial {
	var out []Trial
	for _, tr := range trials {
		if tr.Iteration <= last {
			out = append(out, tr)
		}
	}
	return out
}

// hartmann6 is the 6-d Hartmann function, noise-free: in six dimensions
// the starts TES carries between iterations decide its proposals (on
// Branin they rarely do).
func hartmann6() funcObjective {
	fn := testfunc.Hartmann6()
	return funcObjective{info: unitInfo(6), f: func(_ context.Context, x []float64) (float64, error) {
		return fn.Eval(x)
	}}
}

// openDB opens (or creates) the study database at path.
func openDB(t *testing.T, path string, create bool) *store.DB {
	t.Helper()
	db, err := store.Open(path, store.Options{Create: create})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// interruptedStudy runs o on obj as study "st" in a new database and
// cancels it when the stopAt-th trial finishes, as an interrupted process
// would leave it; it returns the database's path.
func interruptedStudy(t *testing.T, obj sdk.Objective, o Options, stopAt int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, true)
	defer db.Close()
	o.DB = wrap(db)
	interruptStudy(t, obj, o, stopAt)
	return path
}

// interruptStudy runs o on obj as study "st" in o.DB and cancels it when
// the stopAt-th trial finishes.
func interruptStudy(t *testing.T, obj sdk.Objective, o Options, stopAt int64) {
	t.Helper()
	o.Name = "st"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	o.OnTrial = func(Trial) {
		if n.Add(1) == stopAt {
			cancel()
		}
	}
	if _, err := Optimize(ctx, obj, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
}

// reopenAndRun reopens study "st" at path in a new Study (as a new process
// would) with the per-process options o (zero: the stored settings, e.g.
// o.Iters 0 keeps the stored budget), runs it on obj to its end and
// returns its trials.
func reopenAndRun(t *testing.T, path string, o Options, obj sdk.Objective) []Trial {
	t.Helper()
	db := openDB(t, path, false)
	defer db.Close()
	s, err := OpenStudy(context.Background(), wrap(db), "st", o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close() // releases the lease for the next reopening
	if _, err := s.Run(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	return s.Trials()
}
