package host

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/gp"
)

// A study on the local model (10 trials in the trust region) proposes
// inside the region around the best trial and resumes bitwise, both when
// interrupted and when extended; its options keep the model.
func TestLocalModelStudy(t *testing.T) {
	ctx := context.Background()
	opts := func() Options {
		return Options{Batch: 2, Iters: 6, Init: 8, Seed: 5, Grace: -1, Model: ModelLocal, LocalPoints: 10}
	}
	want, err := Optimize(ctx, hartmann6(), opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range want.Trials {
		if tr.Iteration > 0 && tr.Status == Complete {
			checkInLocalRegion(t, want.Trials, tr)
		}
	}
	t.Run("interrupted", func(t *testing.T) {
		path := interruptedStudy(t, hartmann6(), opts(), 13)
		sameTrials(t, want.Trials, reopenAndRun(t, path, 0))
	})
	exact := opts()
	exact.Model = ModelExact
	ex, err := Optimize(ctx, hartmann6(), exact)
	if err != nil {
		t.Fatal(err)
	}
	if sameUs(ex.Trials, want.Trials) {
		t.Fatal("the local model proposed exactly what the exact model did")
	}
}

// checkInLocalRegion fails unless tr lies in the region the local model
// of its iteration had: the box of the 10 trials of earlier iterations
// nearest the best one.
func checkInLocalRegion(t *testing.T, trials []Trial, tr Trial) {
	t.Helper()
	var prior []Trial
	for _, p := range trials {
		if p.Iteration < tr.Iteration && p.Status == Complete {
			prior = append(prior, p)
		}
	}
	ds := newDataset(prior, len(tr.U), false) // Info.Minimize is false
	reg, _, _, err := gp.LocalData(ds.X, ds.y, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	u := make([]float64, len(tr.U))
	reg.ToUnit(u, tr.U)
	if !inUnitCube(u) {
		// Batches of 2 see the other point pending, not completed, so the
		// region is that of all trials of earlier iterations.
		t.Fatalf("trial %d (iteration %d) at %v lies outside its local region (region coordinates %v)", tr.ID, tr.Iteration, tr.U, u)
	}
}

// sameUs reports whether two runs proposed the same unit-cube points.
func sameUs(a, b []Trial) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		for j := range a[i].U {
			if a[i].U[j] != b[i].U[j] {
				return false
			}
		}
	}
	return true
}

// A study whose latest model is local has no stored posterior to show:
// LoadPosterior says so (wrapping ErrNoModel) instead of rebuilding a GP
// with the region's hyper-parameters on all trials.
func TestLocalModelPosteriorRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	db := openDB(t, path, true)
	defer db.Close()
	o := Options{Batch: 1, Iters: 2, Init: 8, Seed: 5, Grace: -1, Model: ModelLocal, LocalPoints: 5, DB: db, Name: "st"}
	if _, err := Optimize(context.Background(), hartmann6(), o); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPosterior(context.Background(), db, "st", 100)
	if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "local") {
		t.Fatalf("LoadPosterior of a local model: %v, want ErrNoModel saying it is local", err)
	}
}
