package host

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
)

// A study on the local model (10 trials in the trust region) proposes
// inside the region around the best trial and resumes bitwise, both when
// interrupted and when extended; its options keep the model.
func TestLocalModelStudy(t *testing.T) {
	t.Parallel() // its own studies and databases; runs beside the other long ones
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
		sameTrials(t, want.Trials, reopenAndRun(t, path, Options{}, hartmann6()))
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
	if !gp.InUnitCube(u) {
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
	o := Options{Batch: 1, Iters: 2, Init: 8, Seed: 5, Grace: -1, Model: ModelLocal, LocalPoints: 5, DB: wrap(db), Name: "st"}
	if _, err := Optimize(context.Background(), hartmann6(), o); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPosterior(context.Background(), wrap(db), "st", 100)
	if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "local") {
		t.Fatalf("LoadPosterior of a local model: %v, want ErrNoModel saying it is local", err)
	}
}

// The local model's success classifier sees only the labelled trials in
// its region, in region coordinates, and none when no trial there failed.
func TestLabelledInRegion(t *testing.T) {
	reg := &gp.Region{Lo: []float64{0.2, 0}, Width: []float64{0.5, 1}}
	X := mat.NewDense(4, 2, []float64{
		0.1, 0.5, // outside
		0.3, 0.5, // inside, failed
		0.45, 0.2, // inside
		0.9, 0.9, // outside, failed
	})
	ok := []bool{true, false, true, false}
	Y, yok := labelledInRegion(reg, X, ok)
	if Y == nil || len(yok) != 2 || yok[0] || !yok[1] {
		t.Fatalf("kept %v %v, want the two inside (failed, succeeded)", Y, yok)
	}
	if u := Y.RawRowView(0); math.Abs(u[0]-0.2) > 1e-12 || u[1] != 0.5 {
		t.Fatalf("inside point in region coordinates %v, want [0.2 0.5]", u)
	}
	if Y, _ := labelledInRegion(reg, X, []bool{false, true, true, false}); Y != nil {
		t.Fatalf("no failure inside the region, but a classifier's data %v", Y)
	}
}

// A local-model study whose objective fails in part of the space runs,
// and a rerun gives bitwise the same trials.
func TestLocalModelWithFailures(t *testing.T) {
	obj := funcObjective{info: unitInfo(2), f: func(_ context.Context, x []float64) (float64, error) {
		if x[0] < 0.3 {
			return 0, errors.New("undefined below 0.3")
		}
		return -(x[0]-0.6)*(x[0]-0.6) - (x[1]-0.4)*(x[1]-0.4), nil
	}}
	o := Options{Iters: 8, Init: 8, Seed: 2, Grace: -1, Model: ModelLocal, LocalPoints: 5}
	a, err := Optimize(context.Background(), obj, o)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Optimize(context.Background(), obj, o)
	if err != nil {
		t.Fatal(err)
	}
	sameTrials(t, a.Trials, b.Trials)
}

// stepRecorder proposes like randomProposer and keeps the IntStep of every
// state it was given.
type stepRecorder struct {
	randomProposer
	steps [][]float64
}

func (r *stepRecorder) Propose(ctx context.Context, s *acq.State, q int) (*mat.Dense, error) {
	r.steps = append(r.steps, s.IntStep)
	return r.randomProposer.Propose(ctx, s, q)
}

// The acquisition learns the Int parameters' bin widths in its GP's
// coordinates: 1/k on the unit cube, over the region's width for the local
// model.
func TestStateIntSteps(t *testing.T) {
	info := sdk.Info{Name: "mixed", Params: []sdk.Param{{Name: "layers", Kind: sdk.Int, Low: 1, High: 4}, {Name: "lr", Kind: sdk.Float, Low: 0, High: 1}}}
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return -math.Abs(x[0]-2) - x[1], nil }}
	for _, model := range []string{ModelExact, ModelLocal} {
		rec := &stepRecorder{}
		o := Options{Proposer: rec, Batch: 1, Iters: 3, Init: 6, Seed: 4, Model: model, LocalPoints: 3}
		if _, err := Optimize(context.Background(), obj, o); err != nil {
			t.Fatal(err)
		}
		if len(rec.steps) != 3 {
			t.Fatalf("%s: %d proposals recorded, want 3", model, len(rec.steps))
		}
		for _, w := range rec.steps {
			if len(w) != 2 || w[1] != 0 {
				t.Fatalf("%s: IntStep %v, want [w, 0]", model, w)
			}
			if model == ModelExact && w[0] != 0.25 {
				t.Fatalf("exact model: IntStep %v, want [0.25 0]", w)
			}
			if model == ModelLocal && !(w[0] > 0.25) {
				t.Fatalf("local model: IntStep %v, want the Int bin wider than 0.25 in region units", w)
			}
		}
	}
}

// The local model's region spans at least IntSpan bins of an Int each way
// (two bins when clipped at the end of its range), so a proposal can move
// the integer: with 80 trials and 2 local points the box would otherwise
// be narrower than one of its four bins.
func TestLocalModelSpansInts(t *testing.T) {
	info := sdk.Info{Name: "mixed", Params: []sdk.Param{{Name: "layers", Kind: sdk.Int, Low: 1, High: 4}, {Name: "lr", Kind: sdk.Float, Low: 0, High: 1}}}
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return -math.Abs(x[0]-2) - x[1], nil }}
	rec := &stepRecorder{}
	o := Options{Proposer: rec, Batch: 1, Iters: 3, Init: 80, Seed: 4, Model: ModelLocal, LocalPoints: 2}
	if _, err := Optimize(context.Background(), obj, o); err != nil {
		t.Fatal(err)
	}
	if len(rec.steps) != 3 {
		t.Fatalf("%d proposals recorded, want 3", len(rec.steps))
	}
	for i, w := range rec.steps {
		if !(w[0] <= 0.5+1e-12) {
			t.Fatalf("proposal %d: region-unit IntStep %v, want the Int's bin at most half the region", i, w)
		}
	}
}

// evaluatedRecorder proposes uniform points and records, per call, the
// GP's size and the State's count of evaluations.
type evaluatedRecorder struct {
	randomProposer
	gpN, evaluated *[]int
}

func (r evaluatedRecorder) Propose(ctx context.Context, s *acq.State, q int) (*mat.Dense, error) {
	*r.gpN = append(*r.gpN, s.GP.N())
	*r.evaluated = append(*r.evaluated, s.Evaluated)
	return r.randomProposer.Propose(ctx, s, q)
}

// acq.State.Evaluated counts every completed evaluation, also when the
// local model's GP holds only some of them: the default acquisition's
// opening design (d + 1 points) must not restart because a local model
// of 3 trials looks like a study of 3.
func TestStateCountsEvaluations(t *testing.T) {
	var gpN, evaluated []int
	opts := Options{Proposer: evaluatedRecorder{gpN: &gpN, evaluated: &evaluated}, Acquisition: "test-record",
		Batch: 1, Iters: 3, Init: 5, Seed: 2, Model: ModelLocal, LocalPoints: 3}
	if _, err := Optimize(context.Background(), hartmann6(), opts); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(evaluated, []int{5, 6, 7}) || !slices.Equal(gpN, []int{3, 3, 3}) {
		t.Fatalf("iterations saw Evaluated %v with GPs of %v points, want [5 6 7] and [3 3 3]", evaluated, gpN)
	}
}

// pinnedLocalRecorder proposes uniform points and records, per call, the
// GP's size and the pins the acquisition was told.
type pinnedLocalRecorder struct {
	randomProposer
	gpN  *[]int
	pins *[][]float64
}

func (r pinnedLocalRecorder) Propose(ctx context.Context, s *acq.State, q int) (*mat.Dense, error) {
	*r.gpN = append(*r.gpN, s.GP.N())
	*r.pins = append(*r.pins, slices.Clone(s.Pinned))
	return r.randomProposer.Propose(ctx, s, q)
}

// A study with a pinned parameter fits the local model too (before, pins
// forced the exact model at any size): its region keeps the pinned
// coordinate whole, so the acquisition is told the pin unchanged, and the
// default acquisition proposes from it, every trial holding the pin.
func TestLocalModelPinned(t *testing.T) {
	fixed := map[string]float64{"x2": 0.3}
	var gpN []int
	var told [][]float64
	o := Options{Proposer: pinnedLocalRecorder{gpN: &gpN, pins: &told}, Acquisition: "test-record",
		Batch: 1, Iters: 3, Init: 12, Seed: 2, Model: ModelLocal, LocalPoints: 5, Fixed: fixed}
	if _, err := Optimize(context.Background(), hartmann6(), o); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gpN, []int{5, 5, 5}) {
		t.Fatalf("GPs of %v points, want the local model's 5 each time", gpN)
	}
	for i, p := range told {
		for j, v := range p {
			if (j == 2) != !math.IsNaN(v) || (j == 2 && v != 0.3) {
				t.Fatalf("proposal %d was told pins %v, want 0.3 at coordinate 2 and nothing else", i, p)
			}
		}
	}

	var logs strings.Builder
	o = Options{Acquisition: "tes", Batch: 1, Iters: 4, Init: 12, Seed: 2, Grace: -1, Model: ModelLocal, LocalPoints: 8,
		Fixed: fixed, Logger: zerolog.New(&logs)}
	res, err := Optimize(context.Background(), hartmann6(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range res.Trials {
		if math.Float64bits(tr.X[2]) != math.Float64bits(0.3) {
			t.Fatalf("trial %d: x2 = %v, pinned at 0.3", tr.ID, tr.X[2])
		}
	}
	if strings.Contains(logs.String(), "space-filling") {
		t.Fatalf("the study fell back to space-filling points:\n%s", logs.String())
	}
}
