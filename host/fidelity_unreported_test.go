package host

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// quietCurve declares a last step but reports nothing.
type quietCurve struct{ curveObjective }

func (o quietCurve) Evaluate(_ context.Context, x []float64) (float64, error) {
	return 1 - (x[0]-0.3)*(x[0]-0.3) - (x[1]-0.3)*(x[1]-0.3), nil
}

// An objective that reports nothing under multi-fidelity ran every trial
// in full: the study stops on the first one proposed below the last step,
// with an input error, after storing it.
func TestFidelityUnreportedRefused(t *testing.T) {
	o := mfOptions(&fixedFidelity{t: 0.3})
	o.Batch = 1
	var done []Trial
	o.OnTrial = func(tr Trial) { done = append(done, tr) }
	_, err := Optimize(context.Background(), quietCurve{curveObjective{steps: 9}}, o)
	var in *InputError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "reported no intermediate value (sdk.Report) in trial 3, proposed to stop at step 3 of 9") {
		t.Fatalf("err = %v, want the input error naming trial 3", err)
	}
	if len(done) != 4 || done[3].Status != Complete || done[3].Meta[fidelityStepKey] != "3" {
		t.Fatalf("%d trials finished (last %+v), want the design's 3 and trial 3 complete", len(done), done[len(done)-1])
	}
}
