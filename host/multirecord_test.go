package host

import (
	"context"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// The user's rule never offers as the best feasible trial one whose own
// observation broke a constraint, nor one the model doubts while a trial
// it is sure of exists; while it is sure of none, the means decide.
func TestBestFeasibleRule(t *testing.T) {
	ctx := context.Background()
	info := unitInfo(1)
	info.Outputs = []sdk.Output{{Name: "f", Goal: sdk.Maximize},
		{Name: "g", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(0.43)}}
	// study returns a new study's attach (x, f and g observed) and the x
	// of its record's best feasible trial.
	study := func() (func(x, f, g float64), func() float64) {
		s, err := NewStudy(ctx, info, Options{Acquisition: "cei", Init: 1, Iters: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		attach := func(x, f, g float64) {
			t.Helper()
			if _, err := s.AttachOutputs(ctx, []float64{x}, []float64{f, g}); err != nil {
				t.Fatal(err)
			}
		}
		best := func() float64 {
			t.Helper()
			var rec Record
			s.multiRecord(&rec, 1, nil)
			if rec.MultiRecord == nil || rec.BestFeasible == nil {
				t.Fatalf("no best feasible trial: %+v", rec.MultiRecord)
			}
			return rec.BestFeasible.X[0]
		}
		return attach, best
	}

	// The only feasible trial, 0.01 inside the bound among infeasible
	// ones: its mean is feasible, the model is not sure of it, nor of any
	// other, so the means decide.
	attach, best := study()
	for _, x := range []float64{0.42, 0.6, 0.8} {
		attach(x, x, x)
	}
	attach(0.1, 0.1, 0.5)
	if x := best(); x != 0.42 {
		t.Fatalf("best feasible trial at %v, want the only feasible one, 0.42", x)
	}

	attach, best = study()
	for i := 0; i <= 8; i++ {
		x := 0.05 * float64(i) // f = g = x, feasible up to 0.43
		attach(x, x, x)
	}
	// On the bound: observed feasible by 1e-9, a coin flip for the model.
	attach(0.43-1e-9, 0.43, 0.43-1e-9)
	if x := best(); x != 0.4 {
		t.Fatalf("best feasible trial at %v, want 0.4 (0.43 sits on the bound)", x)
	}

	// A spike: a point evaluated twice (at 0.3 and 0.301), the second time
	// with a better objective and its constraint observed broken, which
	// the first evaluation and the neighbours make the model sure holds.
	attach, best = study()
	for _, x := range []float64{0, 0.1, 0.2, 0.3, 0.4} {
		attach(x, x, x)
	}
	attach(0.301, 0.6, 0.44)
	if x := best(); x == 0.301 {
		t.Fatalf("best feasible trial at 0.301, observed g = 0.44 > 0.43")
	}
}
