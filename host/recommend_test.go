package host

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// RecommendRefine maximizes the posterior mean over the cube: its mean is
// at least that of every evaluated point, and the record's best_value is
// the noise-free value at x̄.
func TestRecommendRefine(t *testing.T) {
	ctx := context.Background()
	o := baseOptions(3)
	o.Recommend = RecommendRefine
	var last Record
	o.OnIteration = func(r Record) { last = r }
	obj := &branin{}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec, recEv := refinedAndEvaluated(t, s, obj)
	if rec.Mean < recEv.Mean-1e-12 {
		t.Fatalf("refined mean %v below the best evaluated mean %v", rec.Mean, recEv.Mean)
	}
	if rec.TrialID >= 0 {
		t.Fatalf("refinement returned the evaluated trial %d (test needs an unevaluated x̄)", rec.TrialID)
	}
	if rec.Mean <= recEv.Mean {
		t.Fatalf("refined mean %v does not exceed the best evaluated mean %v", rec.Mean, recEv.Mean)
	}
	if last.BestValue == nil || *last.BestValue != braninF(last.BestX) {
		t.Fatalf("refined record: best_value %v, want the noise-free f(%v) = %v", last.BestValue, last.BestX, braninF(last.BestX))
	}
	if last.Regret == nil || math.Abs(*last.Regret-(braninOpt-braninF(last.BestX))) > 1e-12 {
		t.Fatalf("regret %v", last.Regret)
	}
}

// refinedAndEvaluated runs the refining study s on obj and returns its
// recommendation, then the one it makes without refining.
func refinedAndEvaluated(t *testing.T, s *Study, obj sdk.Objective) (refined, evaluated *Recommendation) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	refined, err := s.Recommend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.refine = false
	evaluated, err = s.Recommend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return refined, evaluated
}

// noisyOnly hides the noise-free evaluation (and configuration) of an
// objective, like a real-world plugin.
type noisyOnly struct{ o sdk.Objective }

func (n noisyOnly) Info(ctx context.Context) (sdk.Info, error) { return n.o.Info(ctx) }

func (n noisyOnly) Evaluate(ctx context.Context, x []float64) (float64, error) {
	return n.o.Evaluate(ctx, x)
}

// RecommendAuto refines x̄ only for objectives that can be evaluated without
// noise; for the others best_x is always an evaluated point.
func TestRecommendAuto(t *testing.T) {
	for _, tc := range []struct {
		name   string
		obj    sdk.Objective
		refine bool
	}{
		{"noise-free capable", &branin{}, true},
		{"noisy only", noisyOnly{&branin{noiseVar: 1e-4}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := baseOptions(5)
			if o.Recommend != "" && o.Recommend != RecommendAuto {
				t.Fatalf("baseOptions sets Recommend %q", o.Recommend)
			}
			var recs []Record
			o.OnIteration = func(r Record) { recs = append(recs, r) }
			res, err := Optimize(context.Background(), tc.obj, o)
			if err != nil {
				t.Fatal(err)
			}
			unevaluated := 0
			for _, r := range recs {
				found := false
				for _, tr := range res.Trials[:r.Evals] {
					if fmt.Sprint(tr.X) == fmt.Sprint(r.BestX) {
						found = true
					}
				}
				if !found {
					unevaluated++
				}
			}
			if !tc.refine && unevaluated > 0 {
				t.Fatalf("%d recommendations are not evaluated points", unevaluated)
			}
			if tc.refine && unevaluated == 0 {
				t.Fatalf("no recommendation was refined away from the evaluated points")
			}
		})
	}
}

// A noise-free study (NoiseVar < 0, stored as 0) configures its objective
// with noise_var 0 when it runs and again when it is reopened: the stored,
// already defaulted options must not be defaulted a second time (which
// turned 0 into the default 1e-4), and the values are then exactly f(x).
func TestNoiseFreeStudyStaysNoiseFree(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	o := baseOptions(8)
	o.DB, o.Name, o.Iters, o.NoiseVar = wrap(db), "nf", 2, -1
	check := func(obj *branin, trials []Trial) {
		t.Helper()
		if got := obj.params["noise_var"]; got != "0" {
			t.Fatalf("objective configured with noise_var %q, want 0", got)
		}
		for _, tr := range trials {
			if f := braninF(tr.X); tr.Value != f {
				t.Fatalf("trial %d: value %v, want the noise-free f(x) = %v", tr.ID, tr.Value, f)
			}
		}
	}
	obj := &branin{}
	info, _ := obj.Info(ctx)
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	check(obj, res.Trials)
	s.Close()
	s, err = OpenStudy(ctx, wrap(db), "nf", Options{Proposer: testProposer(), Iters: 3})
	if err != nil {
		t.Fatal(err)
	}
	obj = &branin{}
	if res, err = s.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	check(obj, res.Trials)
}
