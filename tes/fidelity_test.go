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

// fidelityGP returns the toy GP's data (2-d, 10 observations) lifted to
// (x, t) with random fidelities t_i, and an SE kernel with length-scale
// ellT on t (0.3 on x).
func fidelityGP(t testing.TB, ellT float64) (*gp.GP, *gp.GP) {
	t.Helper()
	g := toyGP(t, 3, 10, 2, 0.3, 1e-3)
	return g, liftFidelity(t, g, 0.3, ellT)
}

// liftFidelity returns g's data lifted to (x, t) with fidelities t_i
// drawn in [0.1, 1), under an SE kernel of length-scale ell on x and ellT
// on t.
func liftFidelity(t testing.TB, g *gp.GP, ell, ellT float64) *gp.GP {
	t.Helper()
	X := g.X()
	n, d := X.Dims()
	rng := rand.New(rand.NewPCG(9, 9))
	Xt := mat.NewDense(n, d+1, nil)
	for i := range n {
		copy(Xt.RawRowView(i), X.RawRowView(i))
		Xt.Set(i, d, 0.1+0.9*rng.Float64())
	}
	ls := make([]float64, d+1)
	for j := range d {
		ls[j] = ell
	}
	ls[d] = ellT
	gt, err := gp.New(gp.NewSE(ls, 1), 1e-3, Xt, append([]float64(nil), g.Y()...))
	if err != nil {
		t.Fatal(err)
	}
	return gt
}

// With a fidelity length-scale so long that f(x, t) does not depend on t,
// MF-TES's α at any fidelity is single-fidelity TES's α at x (same X*,
// lifted to t = 1), and the cost-normalized α is it divided by c0 + t
// with the gradient of the quotient.
func TestFidelityAlphaMatchesSingleFidelity(t *testing.T) {
	ctx := context.Background()
	g, gt := fidelityGP(t, 1e5)
	xs := mat.NewDense(3, 2, []float64{0.2, 0.7, 0.55, 0.4, 0.9, 0.1})
	xst := mat.NewDense(3, 3, []float64{0.2, 0.7, 1, 0.55, 0.4, 1, 0.9, 0.1, 1})
	m1, err := modelAt(ctx, g, rand.New(rand.NewPCG(1, 2)), xs, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	mt, err := modelAt(ctx, gt, rand.New(rand.NewPCG(1, 2)), xst, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	f1, err := m1.Func(1, nil, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	ft, err := mt.Func(1, nil, rand.New(rand.NewPCG(5, 6)))
	if err != nil {
		t.Fatal(err)
	}
	cost := acq.FidelityCost{Fixed: 0.2, Steps: 10}
	pc := &perCost{f: ft, cost: cost}
	for _, x := range [][]float64{{0.3, 0.6}, {0.5, 0.45}, {0.85, 0.2}} {
		a1 := f1.Eval(mat.NewDense(1, 2, x), nil)
		if !(a1 > 1e-4) {
			t.Fatalf("α(%v) = %v: pick points where TES learns something", x, a1)
		}
		for _, tf := range []float64{1, 0.5, 0.13} {
			X := mat.NewDense(1, 3, []float64{x[0], x[1], tf})
			at := ft.Eval(X, nil)
			if math.Abs(at-a1) > 1e-6*math.Max(1, a1) {
				t.Errorf("α(%v, t = %v) = %v, single-fidelity α = %v", x, tf, at, a1)
			}
			grad := mat.NewDense(1, 3, nil)
			if v := pc.Eval(X, grad); math.Abs(v-at/(0.2+tf)) > 1e-12 {
				t.Errorf("α/cost at t = %v: %v, want %v", tf, v, at/(0.2+tf))
			}
			// The quotient's gradient against central differences.
			for j := range 3 {
				old := X.At(0, j)
				const h = 1e-6
				X.Set(0, j, old+h)
				fp := pc.Eval(X, nil)
				X.Set(0, j, old-h)
				fm := pc.Eval(X, nil)
				X.Set(0, j, old)
				if fd := (fp - fm) / (2 * h); math.Abs(fd-grad.At(0, j)) > 1e-5+1e-4*math.Abs(fd) {
					t.Errorf("∂(α/cost)/∂x%d at %v: %v, finite differences %v", j, X.RawRowView(0), grad.At(0, j), fd)
				}
			}
		}
	}
}

// When the fidelities are perfectly correlated (a low fidelity tells as
// much as the full one) the cost-normalized choice takes the cheapest
// step; when they are nearly independent, the full one.
func TestFidelityChoiceFollowsCorrelation(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		ellT, want float64
	}{
		{1e5, 0.1},
		{0.05, 1},
	} {
		_, gt := fidelityGP(t, c.ellT)
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st := &acq.State{GP: gt, Iter: 1, Rand: rand.New(rand.NewPCG(4, 4))}
		X, err := p.ProposeFidelity(ctx, st, 1, acq.FidelityCost{Fixed: 0.05, Steps: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := X.At(0, 2); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("fidelity length-scale %v: proposed t = %v, want %v", c.ellT, got, c.want)
		}
		// A batch of two: greedy, the second point given the first.
		st.Rand = rand.New(rand.NewPCG(4, 5))
		B, err := p.ProposeFidelity(ctx, st, 2, acq.FidelityCost{Fixed: 0.05, Steps: 10})
		if err != nil {
			t.Fatal(err)
		}
		if r, cols := B.Dims(); r != 2 || cols != 3 {
			t.Fatalf("batch %d×%d, want 2×3", r, cols)
		}
	}
}

// As Deliver does, MF-TES evaluates x̄ at full fidelity at a warm-started
// study's first iteration even when x̄ lies next to an imported point
// (MinDistance 1e9 puts every point next to one); a study that was not
// warm-started, or one with evaluations of its own, does not.
func TestFidelityWarmStartEvaluatesXBarFirst(t *testing.T) {
	ctx := context.Background()
	_, gt := fidelityGP(t, 0.3)
	for _, c := range []struct {
		name               string
		evaluated, imports int
		want               bool
	}{
		{"warm-started, no evaluation of its own", 10, 10, true},
		{"not warm-started", 10, 0, false},
		{"warm-started, one evaluation of its own", 11, 10, false},
	} {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings.MinDistance = 1e9
		st := &acq.State{GP: gt, Iter: 1, Rand: rand.New(rand.NewPCG(4, 4)), Evaluated: c.evaluated, Imported: c.imports}
		xbar, _, _, err := p.fullRecommendation(ctx, fullFidelity(st), p.Settings.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		st.Rand = rand.New(rand.NewPCG(4, 4))
		X, err := p.ProposeFidelity(ctx, st, 1, acq.FidelityCost{Fixed: 0.05, Steps: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := mat.Equal(X, xbar); got != c.want {
			t.Errorf("%s: proposed x̄ %v, want %v (%v, x̄ %v)", c.name, got, c.want, X.RawRowView(0), xbar.RawRowView(0))
		}
	}
}

// On x̄'s iteration, when x̄ is not worth an evaluation (MinDistance 1e9
// puts it next to an evaluated point), the query is chosen at full
// fidelity; on the other iterations the same model's query takes the
// cheapest step (perfectly correlated fidelities), so the test can tell.
func TestFidelityRefinesAtFullWhenXBarNotWorth(t *testing.T) {
	ctx := context.Background()
	_, gt := fidelityGP(t, 1e5)
	for _, c := range []struct {
		iter int
		want float64
	}{{4, 1}, {5, 0.1}, {8, 1}} {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings.MinDistance = 1e9
		st := &acq.State{GP: gt, Iter: c.iter, Rand: rand.New(rand.NewPCG(4, 4))}
		xbar, _, worth, err := p.fullRecommendation(ctx, fullFidelity(st), p.Settings.withDefaults())
		if err != nil || worth {
			t.Fatalf("x̄ worth an evaluation (%v) with MinDistance 1e9, err %v", worth, err)
		}
		X, err := p.ProposeFidelity(ctx, st, 1, acq.FidelityCost{Fixed: 0.05, Steps: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := X.At(0, 2); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("iteration %d: proposed t = %v, want %v", c.iter, got, c.want)
		}
		if mat.Equal(X, xbar) {
			t.Errorf("iteration %d: proposed x̄ itself", c.iter)
		}
	}
}

// FidelityCost.Snap rounds a fidelity up to its step, within [1/Steps, 1].
func TestFidelitySnap(t *testing.T) {
	c := acq.FidelityCost{Steps: 10}
	for _, v := range [][2]float64{{0, 0.1}, {0.1, 0.1}, {0.1000000001, 0.1}, {0.11, 0.2}, {0.95, 1}, {1, 1}, {2, 1}} {
		if got := c.Snap(v[0]); math.Abs(got-v[1]) > 1e-15 {
			t.Errorf("Snap(%v) = %v, want %v", v[0], got, v[1])
		}
	}
}

// A conditional gain α(P ∪ {b}) − α(P) at a cheap fidelity is a few
// thousandths of a nat; estimated with α(P) on its own base points it
// carries α(P)'s Monte-Carlo error (about 0.01–0.03 here), which divided
// by the cost decides the fidelity. With the batch's base points shared
// (shareBasePoints) the estimate tracks a 2^17-sample reference.
func TestFidelityGainSharesBasePoints(t *testing.T) {
	ctx := context.Background()
	_, gt := fidelityGP(t, 0.5)
	rng := rand.New(rand.NewPCG(9, 9))
	xs := mat.NewDense(5, 3, nil)
	for i := range 5 {
		xs.Set(i, 0, rng.Float64())
		xs.Set(i, 1, rng.Float64())
		xs.Set(i, 2, 1)
	}
	P := mat.NewDense(4, 3, nil) // pending: near X*, at t = 1, 0.04, 0.5, 0.04
	B := mat.NewDense(5, 3, nil) // candidates: near X*, at t = 1/27
	for i := range 5 {
		if i < 4 {
			copy(P.RawRowView(i), xs.RawRowView(i))
			P.Set(i, 0, P.At(i, 0)+0.05)
			P.Set(i, 2, []float64{1, 0.04, 0.5, 0.04}[i])
		}
		copy(B.RawRowView(i), xs.RawRowView(i))
		B.Set(i, 1, B.At(i, 1)+0.03)
		B.Set(i, 2, 1.0/27)
	}
	gains := func(s Settings, seed uint64, share bool) []float64 {
		m, err := modelAt(ctx, gt, rand.New(rand.NewPCG(1, 2)), xs, s)
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Func(1, P, rand.New(rand.NewPCG(seed, 3)))
		if err != nil {
			t.Fatal(err)
		}
		if share {
			if err := f.shareBasePoints(); err != nil {
				t.Fatal(err)
			}
		}
		out := make([]float64, 5)
		for i := range out {
			if out[i], _, err = f.Estimate(B.Slice(i, i+1, 0, 3).(*mat.Dense)); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	ref := gains(Settings{BaseSamples: 1 << 17}, 99, true)
	var errOwn, errShared float64
	for seed := range uint64(10) {
		own, shared := gains(Settings{}, seed, false), gains(Settings{}, seed, true)
		for i := range ref {
			errOwn += math.Abs(own[i] - ref[i])
			errShared += math.Abs(shared[i] - ref[i])
			if math.Abs(shared[i]-ref[i]) > 0.004 {
				t.Errorf("seed %d, candidate %d: gain %.5f with shared base points, reference %.5f", seed, i, shared[i], ref[i])
			}
		}
	}
	if errShared > errOwn/4 {
		t.Errorf("mean error %.5f with shared base points, %.5f without: want at most a quarter", errShared/50, errOwn/50)
	}
	t.Logf("reference %.5f; mean error %.5f shared, %.5f own", ref, errShared/50, errOwn/50)
}
