package host

import (
	"context"
	"math"
	"testing"
)

// The several-output acquisitions of packages tes and acq resume bitwise:
// a two-objective, one-constraint study interrupted mid-batch and resumed
// gives the trials of an uninterrupted one without falling back, and the
// constraint x0 + x1 ≤ 0.6 moves their BO proposals into the feasible
// region: the feasible share is well above the unconstrained study's (see
// TestMultiOutputConstraintAvoidsInfeasible; tes, whose information bound
// also learns where the boundary lies, queries on both sides of it).
func TestMultiOutputAcquisitions(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"tes", "nehvi"} {
		t.Run(name, func(t *testing.T) {
			opts := Options{Acquisition: name, Batch: 2, Iters: 5, Init: 4, Seed: 17, Grace: -1}
			want, err := Optimize(ctx, &twoObjectives{bound: 0.6}, opts)
			if err != nil {
				t.Fatal(err)
			}
			free, err := Optimize(ctx, &twoObjectives{bound: 10}, opts)
			if err != nil {
				t.Fatal(err)
			}
			with, without := feasibleShareOf(want.Trials), feasibleShareOf(free.Trials)
			t.Logf("share of BO proposals with x0+x1 ≤ 0.6: constrained %.2f, unconstrained %.2f", with, without)
			if with < without+0.3 {
				t.Errorf("feasible share %.2f constrained, %.2f unconstrained: want the constraint to add ≥ 0.3", with, without)
			}
			path := interruptedStudy(t, &twoObjectives{bound: 0.6}, opts, 9)
			db := openDB(t, path, false)
			defer db.Close()
			s, err := OpenStudy(ctx, wrap(db), "st", Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Run(ctx, &twoObjectives{bound: 0.6}); err != nil {
				t.Fatal(err)
			}
			got := s.Trials()
			sameTrials(t, want.Trials, got)
			for i := range got {
				for k := range got[i].Outputs {
					if math.Float64bits(got[i].Outputs[k]) != math.Float64bits(want.Trials[i].Outputs[k]) {
						t.Fatalf("trial %d output %d: %v vs %v", i, k, got[i].Outputs[k], want.Trials[i].Outputs[k])
					}
				}
			}
			for it := 1; it <= 5; it++ {
				if fb := s.iters[it].fallback; fb != "" {
					t.Errorf("iteration %d fell back: %s", it, fb)
				}
			}
		})
	}
}

// feasibleShareOf is the share of BO trials with x0 + x1 ≤ 0.6.
func feasibleShareOf(trials []Trial) float64 {
	n, ok := 0, 0
	for _, tr := range trials {
		if tr.Iteration >= 1 {
			n++
			if tr.X[0]+tr.X[1] <= 0.6+1e-9 {
				ok++
			}
		}
	}
	return float64(ok) / float64(n)
}
