package host

import (
	"context"
	"math"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// Values so large that their sum or squared deviations overflow are
// standardized to the same y (to rounding) as the same values scaled
// down, with a finite mean and scale that map y back to them; ordinary
// values, and values all equal, keep standardize's plain form.
func TestStandardizeHugeValues(t *testing.T) {
	base := []float64{-0.9, 0.3, 0.8, 0.1, -0.5, 0.83}
	small := &dataset{sign: 1, scale: 1}
	small.standardize(base)
	for _, k := range []float64{1e200, 1e300, 1.7e308} {
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
			if back := ds.y[i]*ds.scale + ds.mean; math.Abs(back-raw[i]) > 1e-12*k {
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

// hugeObjective is 1e300 · sin(10x)·y: values near the largest float64.
type hugeObjective struct{}

func (hugeObjective) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "test/huge", Params: []sdk.Param{
		{Name: "x", Kind: sdk.Float, Low: 0, High: 1}, {Name: "y", Kind: sdk.Float, Low: 0, High: 1}}}, nil
}

func (hugeObjective) Evaluate(_ context.Context, x []float64) (float64, error) {
	return 1e300 * math.Sin(10*x[0]) * x[1], nil
}

// A study of values near 1e300 climbs as one of values near 1 would: the
// model saw them all as one value before, recommended the worst trial and
// proposed near the minima.
func TestHugeValuesStudy(t *testing.T) {
	res, err := Optimize(context.Background(), hugeObjective{}, Options{Iters: 12, Init: 4, Seed: 1, Grace: -1})
	if err != nil {
		t.Fatal(err)
	}
	worst := math.Inf(1)
	for _, tr := range res.Trials {
		worst = math.Min(worst, tr.Value)
	}
	// f* = 1e300 at x = π/20, y = 1.
	if res.BestObserved == nil || res.BestObserved.Value < 0.95e300 || res.BestValue == nil || *res.BestValue < 0.9e300 {
		t.Fatalf("best observed %v, recommendation's value %v (worst trial %g)", res.BestObserved, res.BestValue, worst)
	}
}
