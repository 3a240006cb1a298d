package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

var mixedCats = []int{0, 3, 0, 2}

func mixedKernels() []*Mixed {
	ls := []float64{0.3, 0.7, 0.45, 1.5}
	return []*Mixed{
		NewMixed(mixedCats, false, ls, 1.3),
		NewMixed(mixedCats, true, ls, 0.7),
		NewMixed([]int{4, 2}, false, []float64{0.5, 2}, 1.1), // categorical only
	}
}

// binCentre draws a categorical coordinate at the centre of a random bin
// (finite differences must not cross a bin edge).
func mixedPoint(rng interface{ Float64() float64 }, cats []int) []float64 {
	x := make([]float64, len(cats))
	for i, n := range cats {
		x[i] = rng.Float64()
		if n > 0 {
			x[i] = (float64(Bin(x[i], n)) + 0.5) / float64(n)
		}
	}
	return x
}

func TestMixedEval(t *testing.T) {
	k := NewMixed(mixedCats, false, []float64{0.3, 0.7, 0.45, 1.5}, 1.3)
	x := []float64{0.1, 0.2, 0.5, 0.9}
	y := []float64{0.4, 0.9, 0.5, 0.8} // choice 0 vs 2 differs; 1 vs 1 equal
	want := 1.3 * math.Exp(-0.5*0.3*0.3/0.09) * math.Exp(-1/0.7)
	if got := k.Eval(x, y); math.Abs(got-want) > 1e-14 {
		t.Fatalf("Eval = %v, want %v", got, want)
	}
	if k.Eval(x, x) != k.Variance() {
		t.Fatal("k(x,x) ≠ σ_s²")
	}
	if err := checkKernel(k); err != nil {
		t.Fatal(err)
	}
}

func TestMixedGradients(t *testing.T) {
	rng := newRNG(11)
	for _, k := range mixedKernels() {
		cats := k.Categories()
		for range 20 {
			x, y := mixedPoint(rng, cats), mixedPoint(rng, cats)
			if rng.Float64() < 0.3 {
				copy(y, x) // equal choices too
				y[0] = rng.Float64()
			}
			g := make([]float64, len(x))
			k.GradX(g, x, y)
			checkClose(t, kname(k)+" GradX", g, fdGrad(func(z []float64) float64 { return k.Eval(z, y) }, x, 1e-6), 1e-6, 1e-9)
			pg := make([]float64, k.NumParams())
			k.ParamGrad(pg, x, y)
			p := k.Params()
			checkClose(t, kname(k)+" ParamGrad", pg, fdGrad(func(q []float64) float64 { return k.WithParams(q).Eval(x, y) }, p, 1e-6), 1e-6, 1e-9)
		}
	}
}

// The kernel matrix on random mixed inputs (many repeated choices) is
// positive definite: its Cholesky factor exists without jitter and its
// smallest eigenvalue is positive.
func TestMixedPositiveDefinite(t *testing.T) {
	rng := newRNG(12)
	for _, k := range mixedKernels() {
		n := 60
		K := mat.NewSymDense(n, nil)
		X := make([][]float64, n)
		for i := range X {
			X[i] = make([]float64, k.Dim())
			for j := range X[i] {
				X[i][j] = rng.Float64() // categorical coordinates anywhere in their bins
			}
		}
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				K.SetSym(i, j, k.Eval(X[i], X[j]))
			}
		}
		var eig mat.EigenSym
		if !eig.Factorize(K, false) {
			t.Fatal("eigendecomposition failed")
		}
		if min := eig.Values(nil)[0]; min < -1e-10*k.Variance() {
			t.Errorf("%s: smallest eigenvalue %g", kname(k), min)
		}
		// Distinct points (every row differs) on the continuous kernel are strictly PD.
		if k.base != nil {
			var ch mat.Cholesky
			if !ch.Factorize(K) {
				t.Errorf("%s: Cholesky failed", kname(k))
			}
		}
	}
}

// The log marginal likelihood gradient of a GP with the mixed kernel
// (generic path through ParamGrad) matches finite differences, and Fit
// learns that a categorical matters.
func TestMixedLMLGradAndFit(t *testing.T) {
	rng := newRNG(13)
	n := 40
	X := mat.NewDense(n, 4, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x := mixedPoint(rng, mixedCats)
		X.SetRow(i, x)
		y[i] = math.Sin(4*x[0]) + 2*float64(Bin(x[1], 3)) - 1 + 0.05*rng.NormFloat64()
	}
	k := NewMixed(mixedCats, false, []float64{0.4, 0.5, 0.6, 0.7}, 1)
	g, err := New(k, 0.01, X, y)
	if err != nil {
		t.Fatal(err)
	}
	grad, err := g.logMarginalLikelihoodGrad()
	if err != nil {
		t.Fatal(err)
	}
	p := append(k.Params(), math.Log(0.01))
	fd := fdGrad(func(q []float64) float64 {
		h, err := New(k.WithParams(q[:5]), math.Exp(q[5]), X, y)
		if err != nil {
			t.Fatal(err)
		}
		return h.logMarginalLikelihood()
	}, p, 1e-5)
	checkClose(t, "LML grad", grad, fd, 1e-5, 1e-6)
	f, err := Fit(X, y, FitSettings{Kernel: k, Rand: newRNG(1)})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Kernel().(*Mixed); !ok {
		t.Fatalf("fitted kernel %T", f.Kernel())
	}
	ls := f.Kernel().Params()
	// Choice of coordinate 1 shifts y by 2 per level: its categorical
	// length-scale must make choices strongly differ (exp(−1/ℓ) small), while
	// the irrelevant coordinate 3 ends up with a long one.
	if c1, c3 := math.Exp(-1/math.Exp(ls[1])), math.Exp(-1/math.Exp(ls[3])); !(c1 < c3) {
		t.Errorf("cross-choice correlations %v (relevant) ≥ %v (irrelevant)", c1, c3)
	}
}

// Paths drawn with a mixed kernel have the kernel's prior covariance: the
// sample covariance of the random-feature prior at pairs of points matches
// k within 4 standard errors.
func TestMixedPathPriorCovariance(t *testing.T) {
	k := NewMixed(mixedCats, false, []float64{0.3, 0.7, 0.45, 1.5}, 1.3)
	X := mat.NewDense(1, 4, []float64{0.5, 0.5, 0.5, 0.5})
	g, err := New(k, 0.1, X, []float64{0})
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2][]float64{
		{{0.1, 0.2, 0.5, 0.9}, {0.4, 0.9, 0.5, 0.8}}, // choice 0 vs 2, same second
		{{0.1, 0.2, 0.5, 0.9}, {0.1, 0.2, 0.7, 0.1}}, // same first, second differs
		{{0.3, 0.5, 0.2, 0.2}, {0.35, 0.5, 0.25, 0.3}},
	}
	paths, err := g.SamplePaths(newRNG(14), 4000, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range pairs {
		var s, ss float64
		for _, p := range paths {
			v := p.prior(pr[0]) * p.prior(pr[1])
			s += v
			ss += v * v
		}
		m := s / float64(len(paths))
		se := math.Sqrt((ss/float64(len(paths)) - m*m) / float64(len(paths)))
		if want := k.Eval(pr[0], pr[1]); math.Abs(m-want) > 4*se {
			t.Errorf("E[f(x)f(y)] = %.4f ± %.4f, k = %.4f", m, se, want)
		}
	}
}

// Posterior paths and the posterior of a mixed-kernel GP have gradients
// that match finite differences along the continuous coordinates (and zero
// along the categorical ones).
func TestMixedPathAndPosteriorGrad(t *testing.T) {
	rng := newRNG(15)
	n := 25
	X := mat.NewDense(n, 4, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		x := mixedPoint(rng, mixedCats)
		X.SetRow(i, x)
		y[i] = math.Sin(4*x[0]) + float64(Bin(x[1], 3)) + x[2]
	}
	g, err := New(mixedKernels()[0], 0.01, X, y)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := g.SamplePaths(newRNG(16), 3, 64)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		x := mixedPoint(rng, mixedCats)
		for _, p := range paths {
			gr := make([]float64, 4)
			v := p.Grad(x, gr)
			if math.Abs(v-p.Eval(x)) > 1e-10 {
				t.Fatalf("Grad value %v, Eval %v", v, p.Eval(x))
			}
			checkClose(t, "path grad", gr, fdGrad(p.Eval, x, 1e-6), 1e-5, 1e-7)
		}
		dm, dv := make([]float64, 4), make([]float64, 4)
		g.MeanVarGrad(x, dm, dv)
		checkClose(t, "mean grad", dm, fdGrad(func(z []float64) float64 { m, _ := g.MeanVar(z); return m }, x, 1e-6), 1e-5, 1e-7)
		checkClose(t, "var grad", dv, fdGrad(func(z []float64) float64 { _, v := g.MeanVar(z); return v }, x, 1e-6), 1e-5, 1e-7)
	}
}

// Bin is min(⌊u·n⌋, n−1) clamped to 0..n−1, at bin edges and outside [0,1]
// (where it agrees with that formula computed with math.Floor).
func TestBinEdges(t *testing.T) {
	for _, c := range []struct {
		u    float64
		n    int
		want int
	}{
		{0, 3, 0}, {1.0 / 3, 3, 1}, {math.Nextafter(1.0/3, 0), 3, 0}, {0.5, 2, 1},
		{math.Nextafter(1, 0), 5, 4}, {1, 5, 4}, {7, 5, 4}, {1e300, 5, 4},
		{-0.3, 4, 0}, {-2, 4, 0}, {math.NaN(), 4, 0}, {math.Inf(1), 4, 3}, {math.Inf(-1), 4, 0},
	} {
		old := min(max(int(math.Floor(c.u*float64(c.n))), 0), c.n-1)
		if !(math.Abs(c.u) < 10) { // the old ⌊u·n⌋ form overflowed int there
			old = c.want
		}
		if got := Bin(c.u, c.n); got != c.want || got != old {
			t.Errorf("Bin(%v, %d) = %d, want %d", c.u, c.n, got, c.want)
		}
	}
}

// The GP's row of covariances for a mixed kernel (Mixed.row) equals Eval
// pair by pair, bit for bit.
func TestMixedRowMatchesEval(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	cats := []int{0, 3, 0, 5, 2}
	k := NewMixed(cats, true, []float64{0.3, 0.7, 0.5, 2, 0.4}, 1.3)
	X := mat.NewDense(20, len(cats), nil)
	for i := range 20 {
		for j := range cats {
			X.Set(i, j, rng.Float64())
		}
	}
	x := []float64{0.1, 0.5, 0.9, 0.05, 0.7}
	dst := make([]float64, 15)
	k.row(dst, x, X, 3, 18)
	for j := 3; j < 18; j++ {
		if want := k.Eval(x, X.RawRowView(j)); dst[j-3] != want {
			t.Fatalf("row %d: %v, Eval %v", j, dst[j-3], want)
		}
	}
}
