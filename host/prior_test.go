package host

import (
	"context"
	"database/sql"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// New studies fit the GP under gp.ScaledPrior unless told otherwise; a
// study stored before Options.GPPrior existed (settings of version 1
// without gp_prior) keeps the weak prior it was run with, so it resumes
// bitwise.
func TestGPPriorChoice(t *testing.T) {
	ctx := context.Background()
	priorOf := func(s *Study) *gp.Prior {
		var got *gp.Prior
		s.testHooks().gpFit = func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error) {
			got = fs.Prior
			return gp.Fit(X, y, fs)
		}
		if _, err := s.Ask(ctx, 0); err != nil { // the initial design
			t.Fatal(err)
		}
		for _, tr := range s.Trials() {
			if err := s.Tell(ctx, tr.ID, float64(tr.ID), nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Ask(ctx, 0); err != nil { // the first fit
			t.Fatal(err)
		}
		return got
	}
	for _, c := range []struct {
		prior string
		want  *gp.Prior
	}{{"", ptr(gp.ScaledPrior(2))}, {PriorScaled, ptr(gp.ScaledPrior(2))}, {PriorWeak, nil}} {
		s, err := NewStudy(ctx, unitInfo(2), Options{GPPrior: c.prior, Proposer: randomProposer{}, Init: 3})
		if err != nil {
			t.Fatal(err)
		}
		if got := priorOf(s); (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("GPPrior %q: fit with prior %+v, want %+v", c.prior, got, c.want)
		}
	}
	if _, err := NewStudy(ctx, unitInfo(2), Options{GPPrior: "tight"}); err == nil {
		t.Error("unknown GPPrior accepted")
	}

	db := tempDB(t)
	s0, err := NewStudy(ctx, unitInfo(2), Options{DB: wrap(db), Name: "old", Proposer: randomProposer{}, Init: 3})
	if err != nil {
		t.Fatal(err)
	}
	s0.Close()
	raw, err := sql.Open("sqlite", db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE studies SET settings=json_remove(settings, '$.gp_prior', '$.version') WHERE name='old'`); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStudy(ctx, wrap(db), "old", Options{Proposer: randomProposer{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := priorOf(s); got != nil {
		t.Errorf("study stored without gp_prior: fit with prior %+v, want the weak default", got)
	}
}

func ptr[T any](v T) *T { return &v }
