package curves

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// The numerically found optimum is a maximum: no point of a dense random
// sample beats it, and the maximizer attains it.
func TestOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range Problems() {
		opt, best := p.Optimum()
		if got := p.Acc(best, Steps); got != opt {
			t.Errorf("%s: Acc(best) = %v, Optimum %v", p.Name, got, opt)
		}
		x := make([]float64, p.Dim)
		for range 20000 {
			for i := range x {
				x[i] = rng.Float64()
			}
			if v := p.Acc(x, Steps); v > opt+1e-9 {
				t.Fatalf("%s: Acc(%v) = %v > optimum %v", p.Name, x, v, opt)
			}
		}
	}
}

// The suite has what it promises: in the cross problems some curves cross
// (a point ahead after 3 epochs ends behind), in the overfit problems some
// curves peak before the last epoch.
func TestCurveShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range Problems() {
		crossed, peaked := false, false
		var pts [][]float64
		for range 200 {
			x := make([]float64, p.Dim)
			for i := range x {
				x[i] = rng.Float64()
			}
			pts = append(pts, x)
			if p.Acc(x, 12) > p.Acc(x, Steps)+0.01 {
				peaked = true
			}
		}
		for i := range pts {
			for j := range pts {
				if p.Acc(pts[i], 3) > p.Acc(pts[j], 3)+0.05 && p.Acc(pts[i], Steps) < p.Acc(pts[j], Steps)-0.05 {
					crossed = true
				}
			}
		}
		switch p.Name[:len(p.Name)-1] {
		case "cross":
			if !crossed {
				t.Errorf("%s: no curves cross", p.Name)
			}
		case "overfit":
			if !peaked {
				t.Errorf("%s: no curve peaks early", p.Name)
			}
		case "saturate":
			if peaked {
				t.Errorf("%s: a curve falls", p.Name)
			}
		}
	}
}

type stopAt struct {
	stop  int
	steps []int
}

func (s *stopAt) Report(step int, _ float64) (bool, error) {
	s.steps = append(s.steps, step)
	return step >= s.stop, nil
}

// An evaluation reports every epoch, stops where told with that epoch's
// value, and is reproducible for a seed.
func TestEvaluateReports(t *testing.T) {
	o, err := New("curve/cross2")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := o.Configure(ctx, map[string]string{"seed": "5", "noise_var": "0.1"}); err != nil {
		t.Fatal(err)
	}
	x := []float64{0.5, 0.2}
	full, _ := o.Evaluate(ctx, x)
	again, _ := o.Evaluate(ctx, x)
	rep := &stopAt{stop: 4}
	v, err := o.Evaluate(sdk.WithReporter(ctx, rep), x)
	if err != nil || len(rep.steps) != 4 || full != again {
		t.Fatalf("reports %v, %v; full %v then %v", rep.steps, err, full, again)
	}
	want := o.p.Acc(x, 4) + noiseSD*gauss(5, x, 4)
	if v != want || math.Abs(full-o.p.Acc(x, Steps)) > 5*noiseSD {
		t.Fatalf("pruned value %v, want %v; full %v vs noise-free %v", v, want, full, o.p.Acc(x, Steps))
	}
	if err := o.Configure(ctx, map[string]string{"nope": "1"}); err == nil {
		t.Fatal("an unknown parameter was accepted")
	}
}
