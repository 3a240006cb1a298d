package synthetic

import (
	"math"
	"testing"
)

// TestMultiObjective checks a several-output problem through the SDK
// surface: a valid Info with outputs and reference point, observations
// within noise of the noise-free outputs, Configure's dimension keys.
func TestMultiObjective(t *testing.T) {
	o, err := NewMulti("dtlz2")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Configure(ctx, map[string]string{KeyDim: "5", KeyObjectives: "3", keySeed: "4"}); err != nil {
		t.Fatal(err)
	}
	info, err := o.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := info.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(info.Params) != 5 || len(info.Outputs) != 3 || len(info.RefPoint) != 3 {
		t.Fatalf("info %+v, want 5 parameters, 3 outputs and a reference point", info)
	}
	x := []float64{0.3, 0.6, 0.5, 0.5, 0.5}
	y, err := o.EvaluateOutputs(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := o.Problem().Eval(x)
	for k := range y {
		if d := math.Abs(y[k] - f[k]); d == 0 || d > 0.05 {
			t.Errorf("output %d: observed %v, noise-free %v", k, y[k], f[k])
		}
	}
	if err := o.Configure(ctx, map[string]string{"instance": "2"}); err == nil {
		t.Error("Configure accepted an unknown key")
	}
	c, _ := NewMulti("speedreducer")
	info, _ = c.Info(ctx)
	if err := info.Validate(); err != nil || len(info.Outputs) != 12 || info.RefPoint != nil {
		t.Errorf("speedreducer: %v, %d outputs, ref %v", err, len(info.Outputs), info.RefPoint)
	}
}
