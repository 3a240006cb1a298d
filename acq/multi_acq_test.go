package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/pareto"
)

// multiFixture fits one GP per output (fixed noise 1e-4, standardized
// values) to fns at the rows of X and returns the several-output state.
func multiFixture(t testing.TB, X *mat.Dense, kinds []OutputKind, fns []func(x []float64) float64, seed uint64) *MultiState {
	t.Helper()
	n, _ := X.Dims()
	Y := mat.NewDense(n, len(fns), nil)
	var outs []Output
	for k, fn := range fns {
		y := make([]float64, n)
		mu, sd := 0.0, 0.0
		for i := range y {
			y[i] = fn(X.RawRowView(i))
			Y.Set(i, k, y[i])
			mu += y[i] / float64(n)
		}
		for _, v := range y {
			sd += (v - mu) * (v - mu) / float64(n)
		}
		sd = math.Sqrt(sd)
		z := make([]float64, n)
		for i, v := range y {
			z[i] = (v - mu) / sd
		}
		g, err := gp.Fit(X, z, gp.FitSettings{FixedNoise: 1e-4})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, Output{Name: string(rune('a' + k)), Kind: kinds[k], GP: g,
			ToValue: func(z float64) float64 { return mu + sd*z },
			ToModel: func(y float64) float64 { return (y - mu) / sd }})
	}
	return &MultiState{Outputs: outs, X: X, Y: Y, Rand: rand.New(rand.NewPCG(seed, 7)), Iter: 1, Evaluated: n}
}

// oneDimToy: f1 = x, f2 = 1 − x² (every point Pareto-optimal), observed on
// [0, 0.5] only, reference point (−0.1, −0.1).
func oneDimToy(t testing.TB, seed uint64) *MultiState {
	X := mat.NewDense(6, 1, []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5})
	s := multiFixture(t, X, []OutputKind{Objective, Objective}, []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 1 - x[0]*x[0] },
	}, seed)
	s.RefPoint = []float64{-0.1, -0.1}
	return s
}

// constrainedToy: maximize x subject to 0.7 − x ≥ 0, observed across [0,1].
func constrainedToy(t testing.TB, seed uint64) *MultiState {
	X := mat.NewDense(8, 1, []float64{0.02, 0.15, 0.3, 0.42, 0.55, 0.8, 0.9, 0.98})
	return multiFixture(t, X, []OutputKind{Objective, Constraint}, []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 0.7 - x[0] },
	}, seed)
}

func TestMultiBaselinesNeedOutputs(t *testing.T) {
	for _, name := range []string{"nehvi", "cei"} {
		p, err := Lookup(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.(MultiProposer); !ok {
			t.Errorf("%s is not a MultiProposer", name)
		}
		_, err = p.Propose(context.Background(), &State{}, 1)
		if err == nil || !strings.Contains(err.Error(), "several outputs") {
			t.Errorf("%s on one output: %v, want an error naming several outputs", name, err)
		}
	}
}

// TestCEIGradient checks cei's analytic gradient against central finite
// differences.
func TestCEIGradient(t *testing.T) {
	s := constrainedToy(t, 1)
	obj, con, thr := kindsOf(s)
	best, _ := feasibleBest(s, s.Outputs[0].GP, con)
	f := &ceiFunc{gps: []*gp.GP{s.Outputs[0].GP, s.Outputs[1].GP}, obj: obj[0], con: con, thr: thr, best: best, improve: true}
	for _, x0 := range []float64{0.12, 0.5, 0.66, 0.85} {
		X := mat.NewDense(1, 1, []float64{x0})
		g := mat.NewDense(1, 1, nil)
		f.Eval(X, g)
		const h = 1e-6
		fp := f.Eval(mat.NewDense(1, 1, []float64{x0 + h}), nil)
		fm := f.Eval(mat.NewDense(1, 1, []float64{x0 - h}), nil)
		if fd := (fp - fm) / (2 * h); math.Abs(fd-g.At(0, 0)) > 1e-5+1e-4*math.Abs(fd) {
			t.Errorf("x = %v: ∂α/∂x = %v, FD %v", x0, g.At(0, 0), fd)
		}
	}
}

// TestCEIMonteCarlo compares exp α = EI·P(feasible) with a Monte Carlo
// estimate of E[(f − best)⁺ · 1{c ≥ t}] under the independent posteriors.
func TestCEIMonteCarlo(t *testing.T) {
	s := constrainedToy(t, 2)
	obj, con, thr := kindsOf(s)
	best, _ := feasibleBest(s, s.Outputs[0].GP, con)
	f := &ceiFunc{gps: []*gp.GP{s.Outputs[0].GP, s.Outputs[1].GP}, obj: obj[0], con: con, thr: thr, best: best, improve: true}
	x := []float64{0.68}
	got := math.Exp(f.Eval(mat.NewDense(1, 1, x), nil))
	m0, v0 := s.Outputs[0].GP.MeanVar(x)
	m1, v1 := s.Outputs[1].GP.MeanVar(x)
	rng := rand.New(rand.NewPCG(5, 5))
	const N = 200000
	sum, sum2 := 0.0, 0.0
	for i := 0; i < N; i++ {
		fv := m0 + math.Sqrt(v0)*rng.NormFloat64()
		cv := m1 + math.Sqrt(v1)*rng.NormFloat64()
		v := 0.0
		if cv >= thr[0] {
			v = math.Max(fv-best, 0)
		}
		sum += v
		sum2 += v * v
	}
	mean := sum / N
	se := math.Sqrt((sum2/N - mean*mean) / N)
	if math.Abs(got-mean) > 4*se || mean == 0 {
		t.Errorf("EI·PF = %v, Monte Carlo %v ± %v", got, mean, se)
	}
}

// TestNEHVIMonteCarlo compares exp α (many base samples) with a brute-force
// estimate from independent joint samples at the baseline and the batch,
// within 4 standard errors of the two estimates.
func TestNEHVIMonteCarlo(t *testing.T) {
	s := oneDimToy(t, 3)
	const N = 20000
	f, err := nehvi{Samples: N}.prepare(s, 2)
	if err != nil {
		t.Fatal(err)
	}
	B := mat.NewDense(2, 1, []float64{0.62, 0.8})
	got := math.Exp(f.Eval(B, nil))
	all := mat.NewDense(8, 1, nil)
	all.Stack(s.X, B)
	vals := make([][]float64, N)
	for i := range vals {
		vals[i] = make([]float64, 16)
	}
	for k, o := range s.Outputs {
		if err := SampleAt(o.GP, all, vals, 8*k, s.Rand); err != nil {
			t.Fatal(err)
		}
	}
	sum, sum2 := 0.0, 0.0
	for _, v := range vals {
		var base, batch [][]float64
		for i := 0; i < 8; i++ {
			p := []float64{s.Outputs[0].ToValue(v[i]), s.Outputs[1].ToValue(v[8+i])}
			if i < 6 {
				base = append(base, p)
			} else {
				batch = append(batch, p)
			}
		}
		h := pareto.HypervolumeImprovement(base, batch, f.ref)
		sum += h
		sum2 += h * h
	}
	mean := sum / N
	se := math.Sqrt((sum2/N - mean*mean) / N)
	if math.Abs(got-mean) > 4*math.Sqrt2*se || mean == 0 {
		t.Errorf("NEHVI = %v, brute force %v ± %v", got, mean, se)
	}
}

// TestMultiBaselinesPropose: nehvi goes to the unobserved half of the
// front; nehvi with one objective (constrained noisy EI) and cei stay near
// the feasible optimum 0.7 of the constrained toy; the same seed gives the
// same batch.
func TestMultiBaselinesPropose(t *testing.T) {
	ctx := context.Background()
	B, err := nehvi{}.ProposeMulti(ctx, oneDimToy(t, 4), 1)
	if err != nil {
		t.Fatal(err)
	}
	if x := B.At(0, 0); x < 0.55 {
		t.Errorf("nehvi proposed %v, want the unobserved part of the front (> 0.55)", x)
	}
	for _, p := range []MultiProposer{nehvi{}, cei{}} {
		var first *mat.Dense
		for rep := 0; rep < 2; rep++ {
			B, err := p.ProposeMulti(ctx, constrainedToy(t, 5), 2)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				if x := B.At(i, 0); x < 0.5 || x > 0.76 {
					t.Errorf("%T proposed %v, want it near the feasible optimum 0.7", p, x)
				}
			}
			if first == nil {
				first = B
			} else if !mat.Equal(first, B) {
				t.Errorf("%T: same seed, different batches", p)
			}
		}
	}
}
