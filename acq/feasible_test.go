package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/gp/classify"
)

// failingState fabricates the situation of issue 14 in 1-D: evaluations
// failed below 0.3 and above 0.8, so the GP has data only in [0.3, 0.8],
// where y rises towards both ends — every acquisition is drawn to the
// unexplored, failing edges. With feasible set, State.Feasible is a
// classifier fitted on the successes and the failures.
func failingState(t *testing.T, feasible bool) *State {
	t.Helper()
	ok := []float64{0.35, 0.45, 0.55, 0.65, 0.75}
	bad := []float64{0.02, 0.08, 0.14, 0.2, 0.26, 0.84, 0.9, 0.96}
	y := make([]float64, len(ok))
	for i, x := range ok {
		y[i] = 8*(x-0.55)*(x-0.55) - 0.1
	}
	g, err := gp.New(gp.NewSE([]float64{0.2}, 1), 1e-4, mat.NewDense(len(ok), 1, ok), y)
	if err != nil {
		t.Fatal(err)
	}
	s := &State{GP: g, Best: maxY(g), Iter: 3, Rand: rand.New(rand.NewPCG(7, 7))}
	if feasible {
		X := mat.NewDense(len(ok)+len(bad), 1, append(append([]float64(nil), ok...), bad...))
		labels := make([]bool, len(ok)+len(bad))
		for i := range ok {
			labels[i] = true
		}
		c, err := classify.Fit(X, labels)
		if err != nil {
			t.Fatal(err)
		}
		s.Feasible = c
	}
	return s
}

// Every acquisition that maximizes over batches stays out of the regions
// where evaluations failed once it knows them, and (the check that the fixture is
// meaningful) at least one point outside it when it does not.
func TestFeasibilityKeepsProposalsOutOfFailingRegions(t *testing.T) {
	fast := OptimizeSettings{RawSamples: 64, Restarts: 3, Workers: 1}
	for _, name := range []string{"ei", "pi", "ucb", "qei", "qei-cl", "lp-ei", "mes", "pes"} {
		t.Run(name, func(t *testing.T) {
			q := 2
			p, err := Lookup(name, Options{Optimize: fast, MCSamples: 64, PathFeatures: 200})
			if err != nil {
				t.Fatal(err)
			}
			outside := func(feasible bool) int {
				X, err := p.Propose(context.Background(), failingState(t, feasible), q)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				t.Logf("feasible=%v: %v", feasible, mat.Formatted(X.T()))
				for i := 0; i < q; i++ {
					// Failures were seen up to 0.26 and from 0.84; within
					// 0.01 of them a point probes the unknown boundary.
					if x := X.At(i, 0); x < 0.25 || x > 0.85 {
						n++
					}
				}
				return n
			}
			if n := outside(true); n > 0 {
				t.Errorf("with the classifier %d of %d points proposed in the failing region", n, q)
			}
			if n := outside(false); n == 0 {
				t.Logf("without the classifier no point falls in the failing region either (fixture not discriminating for %s)", name)
			}
		})
	}
}

// constFunc is a non-negative test acquisition α(X) = Σ rows' x_0 + c.
type constFunc struct{ c float64 }

func (f constFunc) Eval(X, grad *mat.Dense) float64 {
	q, _ := X.Dims()
	v := f.c
	for i := 0; i < q; i++ {
		v += X.At(i, 0)
		if grad != nil {
			grad.Set(i, 0, 1)
		}
	}
	return v
}
func (constFunc) HasGradient() bool { return true }

// stepFeasible is p(x) = Φ(20(x_0 − 0.5)) as a Feasible.
type stepFeasible struct{}

func (stepFeasible) LogProb(x, grad []float64) float64 {
	z := 20 * (x[0] - 0.5)
	if grad != nil {
		for i := range grad {
			grad[i] = 0
		}
		grad[0] = 20 * invMills(z)
	}
	return LogPhi(z)
}

func TestFeasibilityWeightedValues(t *testing.T) {
	var sf stepFeasible
	s := &State{Feasible: sf}
	X := mat.NewDense(2, 1, []float64{0.6, 0.55})
	p := math.Exp(sf.LogProb([]float64{0.6}, nil) + sf.LogProb([]float64{0.55}, nil))
	// α ≥ 0: α·Π p.
	pos, neg := constFunc{1}, constFunc{-3}
	if got, want := FeasibilityWeighted(pos, s).Eval(X, nil), 2.15*p; math.Abs(got-want) > 1e-12 {
		t.Errorf("α ≥ 0: got %v, want α·p = %v", got, want)
	}
	// α < 0 (a Func that does not say it is log-scale): α / Π p.
	if got, want := FeasibilityWeighted(neg, s).Eval(X, nil), -1.85/p; math.Abs(got-want) > 1e-12 {
		t.Errorf("α < 0: got %v, want α/p = %v", got, want)
	}
	// Log-scale Funcs (EI): α + log Π p.
	st := failingState(t, false)
	st.Feasible = sf
	ei, _ := ei{}.Prepare(context.Background(), st, 1)
	x := mat.NewDense(1, 1, []float64{0.6})
	if got, want := FeasibilityWeighted(ei, st).Eval(x, nil), ei.Eval(x, nil)+sf.LogProb([]float64{0.6}, nil); math.Abs(got-want) > 1e-12 {
		t.Errorf("log EI: got %v, want log EI + log p = %v", got, want)
	}
	// Below the floor the weight drops steeply: at p = floor/2 another 2^-10.
	xf := 0.5 + (-1.9599639845400538)/20 // Φ⁻¹(0.025)/20: p = 0.025
	lw, _ := logWeight(sf.LogProb([]float64{xf}, nil))
	if want := math.Log(0.025) - 10*math.Log(2); math.Abs(lw-want) > 1e-6 {
		t.Errorf("log w(0.025) = %v, want %v", lw, want)
	}
	// No failures: the Func is returned unchanged.
	f := Func(constFunc{1})
	if FeasibilityWeighted(f, &State{}) != f {
		t.Error("FeasibilityWeighted without Feasible wrapped the Func")
	}
}

func TestFeasibilityWeightedGradient(t *testing.T) {
	s := &State{Feasible: stepFeasible{}}
	for _, c := range []float64{1, -3} {
		checkGrad(t, "weighted", FeasibilityWeighted(constFunc{c}, s), mat.NewDense(2, 1, []float64{0.52, 0.47}), 1e-6, 1e-5)
	}
	st := failingState(t, true)
	for _, name := range []string{"ei", "ucb"} {
		sc := map[string]Scorer{"ei": ei{}, "ucb": UCB{Beta: 2}}[name]
		f, err := sc.Prepare(context.Background(), st, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []float64{0.1, 0.33, 0.6, 0.9} {
			checkGrad(t, name, FeasibilityWeighted(f, st), mat.NewDense(1, 1, []float64{x}), 1e-6, 1e-4)
		}
	}
}
