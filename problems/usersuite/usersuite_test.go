package usersuite

import (
	"cmp"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// randomPoint draws a point of the problem's space in native units, uniform
// in the host's unit-cube coordinates (log scale for LogFloat, integers for
// Int).
func randomPoint(p *Problem, rng *rand.Rand) []float64 {
	x := make([]float64, len(p.Params))
	for i, pr := range p.Params {
		x[i] = fromUnitParam(pr, rng.Float64())
	}
	return x
}

func fromUnitParam(pr sdk.Param, u float64) float64 {
	switch pr.Kind {
	case sdk.LogFloat:
		return math.Exp(math.Log(pr.Low) + u*(math.Log(pr.High)-math.Log(pr.Low)))
	case sdk.Int:
		return math.Round(pr.Low + u*(pr.High-pr.Low))
	}
	return pr.Low + u*(pr.High-pr.Low)
}

// better reports whether v beats the optimum by more than tol.
func better(p *Problem, v, tol float64) bool {
	if p.Minimize {
		return v < p.Opt-tol
	}
	return v > p.Opt+tol
}

type pt struct {
	x []float64
	v float64
}

func (c pt) value() float64 { return c.v }

// Every problem's stated optimum is attained at its stated point, and no
// point of a dense random search, nor a local search (random coordinate
// steps shrinking to 1e-9 of the range) from the best 20 of them, beats it.
func TestStatedOptima(t *testing.T) {
	if len(Problems()) < 15 {
		t.Fatalf("%d problems, want at least 15", len(Problems()))
	}
	for _, p := range Problems() {
		t.Run(p.Name, func(t *testing.T) {
			if got := p.F(p.Best); got != p.Opt {
				t.Fatalf("F(Best) = %v, Opt = %v", got, p.Opt)
			}
			if p.Fails != nil && p.Fails(p.Best) {
				t.Fatalf("the optimum %v lies in the failing region", p.Best)
			}
			for i, pr := range p.Params {
				v := p.Best[i]
				if v < pr.Low || v > pr.High || (pr.Kind == sdk.Int && v != math.Round(v)) {
					t.Fatalf("Best[%d] = %v is not a valid value of %+v", i, v, pr)
				}
			}
			scale := math.Max(1e-9, 1e-9*math.Abs(p.Opt))
			rng := rand.New(rand.NewPCG(1, 2))
			var top []pt
			for range 100000 {
				x := randomPoint(p, rng)
				v := p.F(x)
				if better(p, v, scale) {
					t.Fatalf("F(%v) = %v beats the stated optimum %v", x, v, p.Opt)
				}
				top = append(top, pt{x, v})
				if len(top) > 200 {
					top = bestN(p, top, 20)
				}
			}
			top = bestN(p, top, 20)
			for _, c := range top {
				x, v := localSearch(p, c.x, rng)
				if better(p, v, scale) {
					t.Fatalf("local search reached F(%v) = %v, beyond the stated optimum %v", x, v, p.Opt)
				}
			}
		})
	}
}

// bestN returns the n best points of pts (by p's sense).
func bestN[P interface{ value() float64 }](p *Problem, pts []P, n int) []P {
	slices.SortFunc(pts, func(a, b P) int {
		if p.Minimize {
			return cmp.Compare(a.value(), b.value())
		}
		return cmp.Compare(b.value(), a.value())
	})
	return pts[:min(n, len(pts))]
}

// localSearch improves x by random single-coordinate steps (Int
// coordinates by ±1), shrinking the step when no step helps.
func localSearch(p *Problem, x []float64, rng *rand.Rand) ([]float64, float64) {
	x = append([]float64(nil), x...)
	v := p.F(x)
	step := 0.1
	for step > 1e-9 {
		improved := false
		for range 50 {
			i := rng.IntN(len(x))
			pr := p.Params[i]
			y := append([]float64(nil), x...)
			switch pr.Kind {
			case sdk.Int:
				y[i] += float64(1 - 2*rng.IntN(2))
			case sdk.LogFloat:
				y[i] *= math.Exp(step * rng.NormFloat64() * math.Log(pr.High/pr.Low))
			default:
				y[i] += step * rng.NormFloat64() * (pr.High - pr.Low)
			}
			if y[i] < pr.Low || y[i] > pr.High {
				continue
			}
			if w := p.F(y); better(p, w, 0) && (p.Minimize && w < v || !p.Minimize && w > v) {
				x, v, improved = y, w, true
			}
		}
		if !improved {
			step /= 2
		}
	}
	return x, v
}

func TestFailingRegionsAndNoise(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"user/fail4", "user/fail2"} {
		o, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 4))
		failed := 0
		for range 1000 {
			x := randomPoint(o.p, rng)
			_, err := o.Evaluate(ctx, x)
			if o.p.Fails(x) != errors.Is(err, ErrFailed) {
				t.Fatalf("%s at %v: error %v, failing region says %v", name, x, err, o.p.Fails(x))
			}
			if err != nil {
				failed++
			}
		}
		if failed < 50 || failed > 500 {
			t.Errorf("%s: %d of 1000 random points fail, want a region of 5–50%%", name, failed)
		}
	}
	o, _ := New("user/noisy-bumps3")
	if err := o.Configure(ctx, map[string]string{"seed": "7", "noise_var": "1e-4"}); err != nil {
		t.Fatal(err)
	}
	x := []float64{0.5, 0.5, 0.5}
	f, _ := o.EvaluateNoiseFree(ctx, x)
	a, _ := o.Evaluate(ctx, x)
	b, _ := o.Evaluate(ctx, x)
	if a != b || a == f {
		t.Fatalf("noisy observations %v, %v of f = %v: want the same noisy value twice", a, b, f)
	}
	var sum, sum2 float64
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 4000
	for range n {
		x := randomPoint(o.p, rng)
		y, _ := o.Evaluate(ctx, x)
		e := y - o.p.F(x)
		sum += e
		sum2 += e * e
	}
	sd := math.Sqrt(sum2 / n)
	// The sample SD of n normal deviates has a standard error ≈ σ/√(2n).
	if se := o.p.NoiseSD / math.Sqrt(2*n); math.Abs(sd-o.p.NoiseSD) > 4*se || math.Abs(sum/n) > 4*o.p.NoiseSD/math.Sqrt(n) {
		t.Fatalf("noise mean %v sd %v, want 0 and %v", sum/n, sd, o.p.NoiseSD)
	}
}

func TestLookupAndInfo(t *testing.T) {
	ctx := context.Background()
	for _, name := range Names() {
		o, err := New(name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := o.Info(ctx)
		if err != nil || info.Name != name || info.Optimum == nil || *info.Optimum != o.p.Opt {
			t.Fatalf("%s: info %+v, %v", name, info, err)
		}
		if err := info.Validate(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := New("user/nope"); err == nil {
		t.Fatal("unknown problem accepted")
	}
}
