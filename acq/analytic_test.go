package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func testState(t testing.TB, n, d int, seed uint64) *State {
	g := fixtureGP(t, n, d, seed)
	return &State{GP: g, Best: maxY(g), Iter: 3, Rand: rand.New(rand.NewPCG(seed, 99))}
}

// TestClosedForms checks EI, PI and UCB against the textbook formulas
// evaluated by hand from the posterior mean and variance at a point, with
// Φ, φ from math.Erfc/math.Exp (not the package's helpers).
func TestClosedForms(t *testing.T) {
	s := testState(t, 12, 2, 1)
	x := []float64{0.37, 0.61}
	X := mat.NewDense(1, 2, x)
	m, v := s.GP.MeanVar(x)
	sd := math.Sqrt(v)
	z := (m - s.Best) / sd
	Phi := 0.5 * math.Erfc(-z/math.Sqrt2)
	phi := math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	ctx := context.Background()

	f, _ := ei{}.Prepare(ctx, s, 1)
	if got, want := f.Eval(X, nil), math.Log((m-s.Best)*Phi+sd*phi); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("log EI = %v, want %v", got, want)
	}
	f, _ = pi{}.Prepare(ctx, s, 1)
	if got, want := f.Eval(X, nil), math.Log(Phi); math.Abs(got-want) > 1e-12*math.Abs(want) {
		t.Errorf("log PI = %v, want %v", got, want)
	}
	f, _ = UCB{Beta: 2}.Prepare(ctx, s, 1)
	if got, want := f.Eval(X, nil), m+math.Sqrt(2)*sd; math.Abs(got-want) > 1e-12 {
		t.Errorf("UCB(β=2) = %v, want %v", got, want)
	}
	f, _ = UCB{}.Prepare(ctx, s, 1)
	beta := 2 * math.Log(2*9*math.Pi*math.Pi/(6*0.1)) // d=2, t=3, δ=0.1
	if got, want := f.Eval(X, nil), m+math.Sqrt(beta)*sd; math.Abs(got-want) > 1e-12 {
		t.Errorf("UCB(schedule) = %v, want %v", got, want)
	}
	// A hand-computed instance: μ = 1, σ = 2, y_best = 0 gives z = 0.5 and
	// EI = (μ − y_best)Φ(z) + σφ(z) with tabulated Φ(0.5), φ(0.5).
	ei := 1*0.69146246127401310364 + 2*0.35206532676429952555
	if v, _, _ := logEI(1, 2, 0); math.Abs(v-math.Log(ei)) > 1e-14 {
		t.Errorf("LogEI(1,2,0) = %v, want log %v", v, ei)
	}
}

func TestAnalyticGradients(t *testing.T) {
	s := testState(t, 15, 3, 2)
	ctx := context.Background()
	X := mat.NewDense(1, 3, []float64{0.21, 0.64, 0.48})
	for _, c := range []struct {
		name string
		sc   Scorer
	}{{"ei", ei{}}, {"pi", pi{}}, {"ucb", UCB{}}, {"ucb-fixed", UCB{Beta: 2}}} {
		f, err := c.sc.Prepare(ctx, s, 1)
		if err != nil {
			t.Fatal(err)
		}
		checkGrad(t, c.name, f, X, 1e-6, 1e-5)
	}
	// Far from the data, where EI underflows, log-EI still has the right
	// gradient.
	far := *s
	far.Best = s.Best + 30
	f, _ := ei{}.Prepare(ctx, &far, 1)
	if v := f.Eval(X, nil); math.IsInf(v, 0) || v > -100 {
		t.Fatalf("log EI far in the tail = %v, expected a large finite negative value", v)
	}
	checkGrad(t, "ei-tail", f, X, 1e-6, 1e-5)
}

func TestSinglePointRejectsBatches(t *testing.T) {
	s := testState(t, 5, 2, 3)
	if _, err := (ei{}).Prepare(context.Background(), s, 2); err == nil {
		t.Error("EI accepted a batch of 2")
	}
}
