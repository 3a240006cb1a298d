package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// multiState fits one GP per output (fixed noise 1e-4, standardized values)
// to fns at the rows of X and returns the several-output state.
func multiState(t testing.TB, X *mat.Dense, kinds []acq.OutputKind, fns []func(x []float64) float64, seed uint64) *acq.MultiState {
	t.Helper()
	n, _ := X.Dims()
	Y := mat.NewDense(n, len(fns), nil)
	var outs []acq.Output
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
		outs = append(outs, acq.Output{Name: string(rune('a' + k)), Kind: kinds[k], GP: g,
			ToValue: func(z float64) float64 { return mu + sd*z },
			ToModel: func(y float64) float64 { return (y - mu) / sd }})
	}
	return &acq.MultiState{Outputs: outs, X: X, Y: Y, Rand: rand.New(rand.NewPCG(seed, 7)), Iter: 1, Evaluated: n}
}

func uniformX(seed uint64, n, d int) *mat.Dense {
	return randBatch(rand.New(rand.NewPCG(seed, 3)), n, d)
}

// twoObjectives is a 2-d toy: f1 = −‖x − (0.2, 0.2)‖², f2 = −‖x − (0.8, 0.8)‖²,
// whose Pareto set is the diagonal segment between the two centres.
func twoObjectives() []func(x []float64) float64 {
	c := func(a float64) func(x []float64) float64 {
		return func(x []float64) float64 { return -((x[0]-a)*(x[0]-a) + (x[1]-a)*(x[1]-a)) }
	}
	return []func(x []float64) float64{c(0.2), c(0.8)}
}

// TestMultiInfoGradient checks ∂α/∂B against central finite differences,
// with a pending point, for two objectives and one constraint.
func TestMultiInfoGradient(t *testing.T) {
	fns := append(twoObjectives(), func(x []float64) float64 { return 0.9 - x[0] - x[1] })
	s := multiState(t, uniformX(1, 12, 2), []acq.OutputKind{acq.Objective, acq.Objective, acq.Constraint}, fns, 1)
	s.Pending = uniformX(9, 1, 2)
	f, err := multiTES{}.prepare(s, 2)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(4, 4))
	for rep := 0; rep < 3; rep++ {
		B := randBatch(rng, 2, 2)
		grad := mat.NewDense(2, 2, nil)
		v := f.Eval(B, grad)
		if !(v >= -1e-12) {
			t.Errorf("α(B) = %v, want ≥ 0 (up to round-off)", v)
		}
		const h = 1e-6
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				old := B.At(i, j)
				B.Set(i, j, old+h)
				fp := f.Eval(B, nil)
				B.Set(i, j, old-h)
				fm := f.Eval(B, nil)
				B.Set(i, j, old)
				fd := (fp - fm) / (2 * h)
				if math.Abs(fd-grad.At(i, j)) > 1e-5+1e-4*math.Abs(fd) {
					t.Errorf("∂α/∂B[%d,%d] = %.8g, FD %.8g", i, j, grad.At(i, j), fd)
				}
			}
		}
	}
}

// TestMultiInfoMonteCarlo compares α(B), computed from samples at T and
// the exact conditional p(y_B | f_T), with a brute-force estimate of the
// same bound from joint samples of (f_T, y_B): ½ log det of the empirical
// covariance of y_B overall minus its group-weighted average within the
// groups of the trusted solution, in 10 independent batches whose spread
// gives the tolerance.
func TestMultiInfoMonteCarlo(t *testing.T) {
	s := multiState(t, uniformX(2, 10, 2), []acq.OutputKind{acq.Objective, acq.Objective}, twoObjectives(), 2)
	set := multiSettings{}.withDefaults(2, 2)
	sc, err := newScalarizer(s, 4, s.Rand)
	if err != nil {
		t.Fatal(err)
	}
	T, err := trustedSet(s, sc, set)
	if err != nil {
		t.Fatal(err)
	}
	const S = 6000
	mi, err := newMultiInfo(s, sc, T, S)
	if err != nil {
		t.Fatal(err)
	}
	B := mat.NewDense(2, 2, []float64{0.5, 0.45, 0.3, 0.35})
	got := mi.eval(B, nil)
	nT, _ := T.Dims()
	all := mat.NewDense(nT+2, 2, nil)
	all.Stack(T, B)
	var ests []float64
	for b := 0; b < 10; b++ {
		f := make([][]float64, S) // per sample: output k's values at T ∪ B
		for i := range f {
			f[i] = make([]float64, 2*(nT+2))
		}
		for k, o := range s.Outputs {
			if err := acq.SampleAt(o.GP, all, f, k*(nT+2), s.Rand); err != nil {
				t.Fatal(err)
			}
		}
		y := make([][]float64, S)
		for i, fs := range f {
			y[i] = make([]float64, 4)
			for k := 0; k < 2; k++ {
				for j := 0; j < 2; j++ {
					y[i][k*2+j] = fs[k*(nT+2)+nT+j] + math.Sqrt(s.Outputs[k].GP.NoiseVar())*s.Rand.NormFloat64()
				}
			}
		}
		est := 0.5 * empLogDet(y, nil)
		for l := range sc.lambda {
			labels := make([]int, S)
			for i, fs := range f {
				j, ok := sc.best(l, nT, func(j, k int) float64 { return fs[k*(nT+2)+j] })
				if !ok {
					j = -1
				}
				labels[i] = j
			}
			for _, g := range groupSamples(labels) {
				est -= float64(len(g)) / S / float64(len(sc.lambda)) * 0.5 * empLogDet(y, g)
			}
		}
		ests = append(ests, est)
	}
	mean, sd := meanSD(ests)
	if tol := 4 * sd * math.Sqrt(1+1.0/10); math.Abs(got-mean) > tol {
		t.Errorf("α(B) = %.4f, brute force %.4f ± %.4f (batch sd)", got, mean, sd)
	}
	if got <= 0.05 {
		t.Errorf("α(B) = %.4f: the test batch should be informative", got)
	}
}

// empLogDet is log det of the (1/n) empirical covariance of the rows y[i]
// for i in members (all when nil).
func empLogDet(y [][]float64, members []int) float64 {
	if members == nil {
		for i := range y {
			members = append(members, i)
		}
	}
	dim := len(y[0])
	mu := make([]float64, dim)
	for _, i := range members {
		for j, v := range y[i] {
			mu[j] += v / float64(len(members))
		}
	}
	C := mat.NewSymDense(dim, nil)
	for _, i := range members {
		for a := 0; a < dim; a++ {
			for b := a; b < dim; b++ {
				C.SetSym(a, b, C.At(a, b)+(y[i][a]-mu[a])*(y[i][b]-mu[b])/float64(len(members)))
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(C) {
		return math.Inf(-1)
	}
	return ch.LogDet()
}

func meanSD(v []float64) (float64, float64) {
	m := 0.0
	for _, x := range v {
		m += x / float64(len(v))
	}
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m) / float64(len(v)-1)
	}
	return m, math.Sqrt(s)
}

// TestMultiProposeUncertainFront: two conflicting objectives on [0,1]
// (f1 = x, f2 = 1 − x², every point Pareto-optimal) observed only on
// [0, 0.5]: the proposal goes to the unobserved half of the front.
func TestMultiProposeUncertainFront(t *testing.T) {
	X := mat.NewDense(6, 1, []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5})
	fns := []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 1 - x[0]*x[0] },
	}
	s := multiState(t, X, []acq.OutputKind{acq.Objective, acq.Objective}, fns, 3)
	B, err := multiTES{}.ProposeMulti(context.Background(), s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if x := B.At(0, 0); x < 0.6 {
		t.Errorf("proposal %v, want it in the unobserved part of the front (> 0.6)", x)
	}
}

// TestMultiProposeConstraint: maximize x on [0,1] subject to 0.7 − x ≥ 0,
// both well observed; the batch stays near the feasible optimum 0.7 and
// out of the infeasible region.
func TestMultiProposeConstraint(t *testing.T) {
	X := mat.NewDense(8, 1, []float64{0.02, 0.15, 0.3, 0.42, 0.55, 0.8, 0.9, 0.98})
	fns := []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 0.7 - x[0] },
	}
	s := multiState(t, X, []acq.OutputKind{acq.Objective, acq.Constraint}, fns, 4)
	B, err := multiTES{}.ProposeMulti(context.Background(), s, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if x := B.At(i, 0); x < 0.5 || x > 0.76 {
			t.Errorf("proposal %d at %v, want it near the feasible optimum 0.7", i, x)
		}
	}
}

// TestMultiDeterministic: the same seed gives the same batch, bit for bit.
func TestMultiDeterministic(t *testing.T) {
	var first *mat.Dense
	for rep := 0; rep < 2; rep++ {
		s := multiState(t, uniformX(5, 8, 2), []acq.OutputKind{acq.Objective, acq.Objective}, twoObjectives(), 5)
		B, err := multiTES{}.ProposeMulti(context.Background(), s, 2)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = B
		} else if !mat.Equal(first, B) {
			t.Errorf("same seed, different batches: %v and %v", mat.Formatted(first), mat.Formatted(B))
		}
	}
}

// TestMeanFrontPoint: x̄ extends the posterior-mean front beyond the
// observed half of the 1-d toy, and under a constraint stays feasible by the
// constraint's mean; Deliver's batch of two opens with it with two
// objectives, and with cei's point with one objective under constraints.
func TestMeanFrontPoint(t *testing.T) {
	X := mat.NewDense(6, 1, []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5})
	s := multiState(t, X, []acq.OutputKind{acq.Objective, acq.Objective}, []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 1 - x[0]*x[0] },
	}, 6)
	s.RefPoint = []float64{-0.1, -0.1}
	if xb, _ := meanFrontPoints(context.Background(), s, 256, 1); xb == nil || xb.At(0, 0) <= 0.5 {
		t.Errorf("x̄ = %v, want a point beyond the observed 0.5", xb)
	}
	X = mat.NewDense(8, 1, []float64{0.02, 0.15, 0.3, 0.42, 0.55, 0.8, 0.9, 0.98})
	s = multiState(t, X, []acq.OutputKind{acq.Objective, acq.Constraint}, []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 0.7 - x[0] },
	}, 7)
	xb, _ := meanFrontPoints(context.Background(), s, 256, 1)
	if xb == nil || xb.At(0, 0) < 0.6 || xb.At(0, 0) > 0.72 {
		t.Fatalf("x̄ = %v, want the feasible optimum near 0.7", xb)
	}
	d, err := newDeliver(acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Under constraints with one objective, x̄ is cei's point (exploitPoints).
	cei, err := acq.Lookup("cei", acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Rand = rand.New(rand.NewPCG(7, 7))
	want, err := cei.(acq.MultiProposer).ProposeMulti(context.Background(), s, 1)
	if err != nil {
		t.Fatal(err)
	}
	if w := want.At(0, 0); w < 0.6 || w > 0.72 {
		t.Errorf("cei's x̄ = %v, want the feasible optimum near 0.7", w)
	}
	s.Rand = rand.New(rand.NewPCG(7, 7))
	B, err := d.ProposeMulti(context.Background(), s, 2)
	if err != nil {
		t.Fatal(err)
	}
	if B.At(0, 0) != want.At(0, 0) {
		t.Errorf("batch %v does not open with x̄ = %v", mat.Formatted(B), want.At(0, 0))
	}
	// With two objectives, x̄ is the mean front's point.
	s = multiState(t, X, []acq.OutputKind{acq.Objective, acq.Objective}, []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 1 - x[0]*x[0] },
	}, 7)
	s.RefPoint = []float64{-0.1, -0.1}
	s.Rand = rand.New(rand.NewPCG(7, 7))
	want, _ = meanFrontPoints(context.Background(), s, 512, 1)
	s.Rand = rand.New(rand.NewPCG(7, 7))
	if B, err = d.ProposeMulti(context.Background(), s, 2); err != nil {
		t.Fatal(err)
	}
	if want == nil || B.At(0, 0) != want.At(0, 0) {
		t.Errorf("batch %v does not open with the mean front's x̄ %v", mat.Formatted(B), want)
	}
}

// TestMultiCandidatesMoveAlongFaces: with two objectives, some candidates
// are front points with one coordinate redrawn (far from the point, the
// others unchanged); with one objective under constraints none are.
func TestMultiCandidatesMoveAlongFaces(t *testing.T) {
	moved := func(kinds []acq.OutputKind, fs []func([]float64) float64) int {
		s := multiState(t, uniformX(5, 8, 3), kinds, fs, 5)
		n := 0
		for _, c := range multiCandidates(s, 64) {
			nx, d := s.X.Dims()
			for i := 0; i < nx; i++ {
				diff, far := 0, false
				for j := 0; j < d; j++ {
					if dj := math.Abs(c[j] - s.X.At(i, j)); dj > 0 {
						diff++
						far = far || dj > 0.2
					}
				}
				if diff == 1 && far {
					n++
				}
			}
		}
		return n
	}
	two := moved([]acq.OutputKind{acq.Objective, acq.Objective}, twoObjectives())
	con := moved([]acq.OutputKind{acq.Objective, acq.Constraint}, twoObjectives())
	if two == 0 || con != 0 {
		t.Errorf("candidates moved along one coordinate: %d with two objectives (want > 0), %d under a constraint (want 0)", two, con)
	}
}

// TestExploitSchedule: two evaluations in three go to x̄ (q = 1: iterations
// 0, 1 of every 3; a batch of 4: 3 slots, of 2: 1), and a single-point
// iteration on the schedule proposes the mean front's point.
func TestExploitSchedule(t *testing.T) {
	X := mat.NewDense(8, 1, []float64{0.02, 0.15, 0.3, 0.42, 0.55, 0.8, 0.9, 0.98})
	mo := multiState(t, X, []acq.OutputKind{acq.Objective, acq.Objective}, []func(x []float64) float64{
		func(x []float64) float64 { return x[0] },
		func(x []float64) float64 { return 1 - x[0]*x[0] },
	}, 7)
	for it, want := range []int{1, 1, 0, 1, 1, 0} {
		if got := exploitSlots(it, 1); got != want {
			t.Errorf("Iter %d: %d x̄ slots at q = 1, want %d", it, got, want)
		}
	}
	for q, want := range map[int]int{2: 1, 3: 2, 4: 3, 6: 4} {
		if got := exploitSlots(0, q); got != want {
			t.Errorf("%d x̄ slots at q = %d, want %d", got, q, want)
		}
	}
	mo.RefPoint = []float64{-0.1, -0.1}
	mo.Iter = 1 // x̄ by two in three; one in two would ask the information bound
	mo.Rand = rand.New(rand.NewPCG(7, 7))
	want, _ := meanFrontPoints(context.Background(), mo, 512, 1)
	d, err := newDeliver(acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mo.Rand = rand.New(rand.NewPCG(7, 7))
	B, err := d.ProposeMulti(context.Background(), mo, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want == nil || B.At(0, 0) != want.At(0, 0) {
		t.Errorf("iteration 1 proposed %v, want the mean front's x̄ %v", mat.Formatted(B), mat.Formatted(want))
	}
}

// TestTrustedInReferenceBox: under a weight close to f2's axis the best
// scalarized point has f2 at its best and f1 below the reference point;
// the trusted solution is the best point that dominates the reference
// point instead, a feasible one before an infeasible one, and the
// scalarization alone decides when no point dominates it.
func TestTrustedInReferenceBox(t *testing.T) {
	// Points 0–2 as (f1, f2, constraint), model units, constraint ≥ 0.
	pts := [][]float64{{0.1, 1.0, 1}, {0.5, 0.9, 1}, {0.9, 0.3, 1}}
	sc := &scalarizer{obj: []int{0, 1}, con: []int{2}, thr: []float64{0},
		lo: []float64{0, 0, 0}, span: []float64{1, 1, 1}, lambda: [][]float64{{0.05, 0.95}}}
	val := func(i, k int) float64 { return pts[i][k] }
	check := func(what string, want int) {
		t.Helper()
		if got, ok := sc.best(0, len(pts), val); got != want || !ok {
			t.Errorf("%s: trusted solution %d (feasible %v), want %d", what, got, ok, want)
		}
	}
	check("no reference point", 0)
	sc.refThr = []float64{0.2, 0.2}
	check("point 0 outside the reference box", 1)
	pts[1][2] = -1
	check("point 1 infeasible", 2)
	sc.refThr = []float64{0.95, 0.2}
	check("no feasible point in the box", 0)
}
