package host

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// A study of several outputs warm-starts from an earlier one as
// observations: outputs are matched by name (here in another order, with
// the constraint's bound changed), every imported trial carries all of
// them and the first objective's value, and the first model fits every
// output on exactly the imported trials.
func TestWarmStartSeveralOutputs(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	old := sourceStudy(t, db, &twoObjectives{bound: 10}, Options{Acquisition: "parego", Iters: 3, Init: 4, Seed: 3})
	info, _ := (&twoObjectives{bound: 10}).Info(ctx)
	info.Outputs = []sdk.Output{info.Outputs[2], info.Outputs[1], info.Outputs[0]} // g, f2, f1
	info.Outputs[0].Bound = sdk.Bound(0.9)
	s, err := NewStudy(ctx, info, Options{DB: db, Name: "new", WarmStart: []string{"old"}, Iters: 1, NoInit: true, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := s.Trials()
	if len(got) != len(old) {
		t.Fatalf("%d trials imported, want %d", len(got), len(old))
	}
	for i, tr := range got {
		want := []float64{old[i].Outputs[2], old[i].Outputs[1], old[i].Outputs[0]}
		if tr.Iteration != ImportedIteration || tr.Status != Complete || !slices.Equal(tr.Outputs, want) ||
			tr.Value != want[1] || !slices.Equal(tr.X, old[i].X) {
			t.Fatalf("imported trial %d: %+v, want outputs %v (value f2, the first objective) at %v", i, tr, want, old[i].X)
		}
	}
	if _, err := s.Ask(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if m := s.lastModel; m == nil || m.N != len(old) || len(m.Outputs) != 3 {
		t.Fatalf("first model %+v, want one GP per output fitted on the %d imported trials", m, len(old))
	}
}

// Outputs that do not match, several outputs in the prior mode, and one
// value against several are refused in one line.
func TestWarmStartSeveralOutputsRefusals(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	sourceStudy(t, db, &twoObjectives{bound: 10}, Options{Acquisition: "parego", Iters: 1, Init: 4, Seed: 3})
	base, _ := (&twoObjectives{bound: 10}).Info(ctx)
	renamed, flipped := base, base
	renamed.Outputs = slices.Clone(base.Outputs)
	renamed.Outputs[0].Name = "h"
	flipped.Outputs = slices.Clone(base.Outputs)
	flipped.Outputs[1].Goal = sdk.Maximize
	for _, c := range []struct {
		info sdk.Info
		mode string
		want string
	}{
		{renamed, "", "it has no output h: outputs are matched by name"},
		{flipped, "", "output f2 is a minimize there and a maximize here"},
		{base, WarmPrior, "the prior mode ranks the source trials by one value"},
		{unitInfo(2), "", "it has 3 outputs and this objective one value"},
	} {
		_, err := NewStudy(ctx, c.info, Options{DB: db, Name: "new", WarmStart: []string{"old"}, WarmStartMode: c.mode, Iters: 1})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %q: got %v, want %q", c.info.Name, c.mode, err, c.want)
		}
	}
}

// A warm-started study of several outputs interrupted mid-run and
// reopened ends with exactly the trials, outputs included, of an
// uninterrupted one.
func TestWarmStartSeveralOutputsResumeExact(t *testing.T) {
	path := t.TempDir() + "/w.db"
	raw := openDB(t, path, true)
	sourceStudy(t, wrap(raw), &twoObjectives{bound: 1.2}, Options{Acquisition: "parego", Iters: 2, Init: 4, Seed: 3})
	o := Options{Iters: 4, NoInit: true, Seed: 4, WarmStart: []string{"old"}, DB: wrap(raw), Grace: -1}
	o.Name = "whole"
	want, err := Optimize(context.Background(), &twoObjectives{bound: 1.2}, o)
	if err != nil {
		t.Fatal(err)
	}
	interruptStudy(t, &twoObjectives{bound: 1.2}, o, 2)
	raw.Close()
	got := reopenAndRun(t, path, Options{}, &twoObjectives{bound: 1.2})
	sameTrials(t, want.Trials, got)
	if len(got) != 6+4 {
		t.Fatalf("%d trials, want the 6 imported and 4 iterations", len(got))
	}
	for i := range got {
		for k := range got[i].Outputs {
			if math.Float64bits(got[i].Outputs[k]) != math.Float64bits(want.Trials[i].Outputs[k]) {
				t.Fatalf("trial %d: outputs %v, want %v", i, got[i].Outputs, want.Trials[i].Outputs)
			}
		}
	}
}
