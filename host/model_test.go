package host

import (
	"context"
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
)

// Values of any order — so large that their squared deviations overflow,
// so small that they underflow, or merely far below 1 — are standardized
// to the same y (to rounding) as the same values of order 1, with a
// finite mean and scale that map y back to them; values all equal keep
// scale 1 and y = 0.
func TestStandardizeHugeValues(t *testing.T) {
	base := []float64{-0.9, 0.3, 0.8, 0.1, -0.5, 0.83}
	small := &dataset{sign: 1, scale: 1}
	small.standardize(base)
	for _, k := range []float64{1e200, 1e300, 1.7e308, 1e-20, 1e-200, 1e-300} {
		raw := make([]float64, len(base))
		for i, v := range base {
			raw[i] = k * v
		}
		ds := &dataset{sign: 1, scale: 1}
		ds.standardize(raw)
		if math.IsInf(ds.mean, 0) || math.IsInf(ds.scale, 0) || math.IsNaN(ds.mean) || ds.scale <= 0 {
			t.Fatalf("k = %g: mean %v, scale %v", k, ds.mean, ds.scale)
		}
		for i := range raw {
			if math.Abs(ds.y[i]-small.y[i]) > 1e-12 {
				t.Fatalf("k = %g: y %v, want %v", k, ds.y, small.y)
			}
			if back := ds.y[i]*ds.scale + ds.mean; math.Abs(back-raw[i]) > 1e-12*k || math.IsInf(ds.scale, 0) {
				t.Fatalf("k = %g: y %v maps back to %v, not %v", k, ds.y[i], back, raw[i])
			}
		}
	}
	equal := &dataset{sign: 1, scale: 1}
	equal.standardize([]float64{1e300, 1e300, 1e300})
	if equal.y[0] != 0 || equal.y[0]*equal.scale+equal.mean != 1e300 {
		t.Fatalf("equal huge values: y %v, mean %v, scale %v", equal.y, equal.mean, equal.scale)
	}
}

// scaledObjective is k · sin(10x)·y, maximized: f* = k at x = π/20, y = 1.
type scaledObjective struct{ k float64 }

func (scaledObjective) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "test/scaled", Params: []sdk.Param{
		{Name: "x", Kind: sdk.Float, Low: 0, High: 1}, {Name: "y", Kind: sdk.Float, Low: 0, High: 1}}}, nil
}

func (o scaledObjective) Evaluate(_ context.Context, x []float64) (float64, error) {
	return o.k * math.Sin(10*x[0]) * x[1], nil
}

// A study of values of order 1e300, 1e-20 or 1e-300 climbs as one of
// values of order 1 does. Before, the model saw each as one constant
// value: at 1e300 the scale overflowed and the study recommended its worst
// trial; below 1e-12 the spread counted as rounding and the study never
// left its initial design's best.
func TestScaledValuesStudy(t *testing.T) {
	for _, k := range []float64{1, 1e300, 1e-20, 1e-300} {
		res, err := Optimize(context.Background(), scaledObjective{k}, Options{Iters: 12, Init: 4, Seed: 1, Grace: -1})
		if err != nil {
			t.Fatal(err)
		}
		if res.BestObserved == nil || res.BestObserved.Value < 0.95*k || res.BestValue == nil || *res.BestValue < 0.9*k {
			t.Errorf("k = %g: best observed %v, recommendation's value %v", k, res.BestObserved.Value, res.BestValue)
		}
	}
}

// A fit stopped by a done context stops the proposal with the context's
// error (no fallback batch, nothing issued), and the study then goes on
// exactly as one never interrupted.
func TestFitInterruptedIsNotAFallback(t *testing.T) {
	ctx := context.Background()
	obj := &branin{}
	info, _ := obj.Info(ctx)
	drive := func(s *Study, interrupt bool) {
		for !s.Done() {
			if interrupt && s.lastIter >= 1 {
				ictx, cancel := context.WithCancel(ctx)
				s.testHooks().gpFit = func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error) {
					cancel() // the signal arrives during the fit
					return gp.FitContext(ictx, X, y, fs)
				}
				n := len(s.Trials())
				if _, err := s.Ask(ictx, 0); !errors.Is(err, context.Canceled) {
					t.Fatalf("Ask with its fit interrupted: %v, want context.Canceled", err)
				}
				if len(s.Trials()) != n {
					t.Fatalf("the interrupted Ask issued %d trials", len(s.Trials())-n)
				}
				s.testHooks().gpFit, interrupt = nil, false
			}
			askTell(t, s, obj)
		}
	}
	var got [2][]Trial
	for i, interrupt := range []bool{false, true} {
		s, err := NewStudy(ctx, info, baseOptions(5))
		if err != nil {
			t.Fatal(err)
		}
		drive(s, interrupt)
		got[i] = s.Trials()
	}
	sameTrials(t, got[1], got[0])
}
