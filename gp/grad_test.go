package gp

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

const (
	fdStep = 1e-5
	fdRel  = 1e-5
	fdAbs  = 1e-8
)

func TestKernelGradX(t *testing.T) {
	rng := newRNG(11)
	for _, k := range kernels(4) {
		for trial := 0; trial < 5; trial++ {
			x := randDense(rng, 1, 4).RawRowView(0)
			y := randDense(rng, 1, 4).RawRowView(0)
			g := make([]float64, 4)
			v := k.GradX(g, x, y)
			checkClose(t, "GradX value", []float64{v}, []float64{k.Eval(x, y)}, 1e-14, 0)
			fd := fdGrad(func(z []float64) float64 { return k.Eval(z, y) }, x, fdStep)
			checkClose(t, kname(k)+" GradX", g, fd, fdRel, fdAbs)
		}
		// At x = y the gradient is 0 (stationarity) and finite.
		x := []float64{0.3, 0.3, 0.3, 0.3}
		g := make([]float64, 4)
		k.GradX(g, x, x)
		checkClose(t, kname(k)+" GradX(x,x)", g, make([]float64, 4), 0, 1e-15)
	}
}

func TestKernelParamGrad(t *testing.T) {
	rng := newRNG(12)
	for _, k := range kernels(3) {
		for trial := 0; trial < 5; trial++ {
			x := randDense(rng, 1, 3).RawRowView(0)
			y := randDense(rng, 1, 3).RawRowView(0)
			g := make([]float64, 4)
			k.ParamGrad(g, x, y)
			fd := fdGrad(func(p []float64) float64 { return k.WithParams(p).Eval(x, y) }, k.Params(), fdStep)
			checkClose(t, kname(k)+" ParamGrad", g, fd, fdRel, fdAbs)
		}
	}
}

// TestCrossCovGrads checks the matrix forms against central finite
// differences of CrossCov itself: entry (i, j) of G_c against moving X_ic
// (which must leave every other row of K_XY unchanged), and ∂K/∂θ_p
// against moving log-parameter p.
func TestCrossCovGrads(t *testing.T) {
	rng := newRNG(15)
	for _, k := range kernels(3) {
		X, Y := randDense(rng, 4, 3), randDense(rng, 5, 3)
		gx := crossCovGradX(k, X, Y)
		if len(gx) != 3 {
			t.Fatalf("%s: %d query-gradient matrices, want 3", kname(k), len(gx))
		}
		for i := 0; i < 4; i++ {
			for c := 0; c < 3; c++ {
				old := X.At(i, c)
				X.Set(i, c, old+fdStep)
				kp := CrossCov(k, X, Y)
				X.Set(i, c, old-fdStep)
				km := CrossCov(k, X, Y)
				X.Set(i, c, old)
				for r := 0; r < 4; r++ {
					for j := 0; j < 5; j++ {
						fd := (kp.At(r, j) - km.At(r, j)) / (2 * fdStep)
						want := 0.0
						if r == i {
							want = gx[c].At(i, j)
						}
						checkClose(t, fmt.Sprintf("%s ∂K[%d,%d]/∂X[%d,%d]", kname(k), r, j, i, c), []float64{want}, []float64{fd}, fdRel, fdAbs)
					}
				}
			}
		}
		gth := crossCovParamGrad(k, X, Y)
		p := k.Params()
		if len(gth) != len(p) {
			t.Fatalf("%s: %d parameter-gradient matrices, want %d", kname(k), len(gth), len(p))
		}
		for c := range p {
			pp := append([]float64(nil), p...)
			pp[c] += fdStep
			kp := CrossCov(k.WithParams(pp), X, Y)
			pp[c] -= 2 * fdStep
			km := CrossCov(k.WithParams(pp), X, Y)
			for i := 0; i < 4; i++ {
				for j := 0; j < 5; j++ {
					fd := (kp.At(i, j) - km.At(i, j)) / (2 * fdStep)
					checkClose(t, fmt.Sprintf("%s ∂K[%d,%d]/∂θ_%d", kname(k), i, j, c), []float64{gth[c].At(i, j)}, []float64{fd}, fdRel, fdAbs)
				}
			}
		}
	}
}

// allKernels: the package's kernels (radial fast paths), then the generic
// ones (the generic Kernel code path, see generic_test.go).
func allKernels(d int) []Kernel { return append(kernels(d), genericKernels(d)...) }

func TestMeanVarGrad(t *testing.T) {
	rng := newRNG(13)
	for _, k := range allKernels(3) {
		g := testProblem(t, k, 20, 0.01, 14)
		for trial := 0; trial < 5; trial++ {
			x := randDense(rng, 1, 3).RawRowView(0)
			dm, dv := make([]float64, 3), make([]float64, 3)
			m, v := g.MeanVarGrad(x, dm, dv)
			m0, v0 := g.MeanVar(x)
			checkClose(t, "value", []float64{m, v}, []float64{m0, v0}, 1e-12, 1e-14)
			fm := fdGrad(func(z []float64) float64 { m, _ := g.MeanVar(z); return m }, x, fdStep)
			fv := fdGrad(func(z []float64) float64 { _, v := g.MeanVar(z); return v }, x, fdStep)
			checkClose(t, kname(k)+" dMean", dm, fm, fdRel, fdAbs)
			checkClose(t, kname(k)+" dVar", dv, fv, fdRel, fdAbs)
		}
	}
}

// asDense wraps a copy of z as an r×c matrix.
func asDense(z []float64, r, c int) *mat.Dense {
	return mat.NewDense(r, c, append([]float64(nil), z...))
}

func randVec(rng interface{ NormFloat64() float64 }, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// jointLoss returns Z ↦ gmᵀm(Z) + Σᵢⱼ gcᵢⱼ C(Z)ᵢⱼ for the q×d batch Z (as
// flat data), where m, C = g.Joint(Z): the scalar whose gradient
// g.JointVJP(Z, gm, gc) must equal. A nil gc drops the covariance term, as
// JointVJP treats a nil gradient as zeros.
func jointLoss(g *GP, gm []float64, gc *mat.Dense, q, d int) func([]float64) float64 {
	return func(z []float64) float64 {
		m, c := g.Joint(asDense(z, q, d))
		v := mat.Dot(mat.NewVecDense(q, gm), mat.NewVecDense(q, m))
		if gc == nil {
			return v
		}
		for i := 0; i < q; i++ {
			for j := 0; j < q; j++ {
				v += gc.At(i, j) * c.At(i, j)
			}
		}
		return v
	}
}

// predictLoss returns Z ↦ Σ gA∘A(Z) + gbᵀb(Z) + Σ gS∘S(Z) for the q×d batch
// Z (as flat data), where A, b, S = c.Predict(Z) and A is q×s: the scalar
// whose gradient c.PredictVJP(Z, gA, gb, gS) must equal. A nil gradient drops
// its term, as PredictVJP treats it as zeros.
func predictLoss(c *Conditioned, gA *mat.Dense, gb []float64, gS *mat.Dense, q, d int) func([]float64) float64 {
	return func(z []float64) float64 {
		A, b, S := c.Predict(asDense(z, q, d))
		_, s := A.Dims()
		var v float64
		for i := 0; i < q; i++ {
			if gb != nil {
				v += gb[i] * b[i]
			}
			if gA != nil {
				for j := 0; j < s; j++ {
					v += gA.At(i, j) * A.At(i, j)
				}
			}
			if gS != nil {
				for j := 0; j < q; j++ {
					v += gS.At(i, j) * S.At(i, j)
				}
			}
		}
		return v
	}
}

func TestJointVJP(t *testing.T) {
	rng := newRNG(15)
	const q, d = 4, 3
	for _, k := range allKernels(d) {
		g := testProblem(t, k, 25, 0.01, 16)
		for trial := 0; trial < 3; trial++ {
			X := randDense(rng, q, d)
			gm := randVec(rng, q)
			gc := mat.NewDense(q, q, randVec(rng, q*q)) // not symmetric on purpose
			got := g.JointVJP(X, gm, gc)
			fd := fdGrad(jointLoss(g, gm, gc, q, d), denseData(X), fdStep)
			checkClose(t, kname(k)+" JointVJP", denseData(got), fd, fdRel, fdAbs)
			// nil gradients are zeros.
			onlyMean := g.JointVJP(X, gm, nil)
			fdm := fdGrad(jointLoss(g, gm, nil, q, d), denseData(X), fdStep)
			checkClose(t, kname(k)+" JointVJP mean only", denseData(onlyMean), fdm, fdRel, fdAbs)
		}
	}
}

func TestPredictVJP(t *testing.T) {
	rng := newRNG(17)
	const q, d, s = 3, 2, 4
	for _, k := range allKernels(d) {
		g := testProblem(t, k, 20, 0.02, 18)
		c, err := g.Condition(randDense(rng, s, d))
		if err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 3; trial++ {
			XB := randDense(rng, q, d)
			gA := mat.NewDense(q, s, randVec(rng, q*s))
			gb := randVec(rng, q)
			gS := mat.NewDense(q, q, randVec(rng, q*q))
			got := c.predictVJP(XB, gA, gb, gS)
			fd := fdGrad(predictLoss(c, gA, gb, gS, q, d), denseData(XB), fdStep)
			checkClose(t, kname(k)+" PredictVJP", denseData(got), fd, fdRel, fdAbs)
			// Each part alone (nil for the others).
			gotA := c.predictVJP(XB, gA, nil, nil)
			fdA := fdGrad(predictLoss(c, gA, nil, nil, q, d), denseData(XB), fdStep)
			checkClose(t, kname(k)+" PredictVJP A only", denseData(gotA), fdA, fdRel, fdAbs)
		}
	}
}

func TestLMLGrad(t *testing.T) {
	for _, k := range kernels(3) {
		for trial, noise := range []float64{1e-3, 0.05, 0.3} {
			g := testProblem(t, k, 30, noise, uint64(20+trial))
			got, err := g.logMarginalLikelihoodGrad()
			if err != nil {
				t.Fatal(err)
			}
			theta := append(k.Params(), math.Log(noise))
			f := func(th []float64) float64 {
				gg, err := New(k.WithParams(th[:4]), math.Exp(th[4]), g.X(), g.Y())
				if err != nil {
					t.Fatal(err)
				}
				return gg.logMarginalLikelihood()
			}
			checkClose(t, kname(k)+" LML grad", got, fdGrad(f, theta, fdStep), fdRel, 1e-6)
		}
	}
}

// The fit objective (LML + log prior) with the box transform: gradient as
// seen by L-BFGS.
func TestFitObjectiveGrad(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.4}, 1), 25, 0.02, 24)
	p := defaultPrior()
	for _, fixed := range []float64{0, 0.02} {
		e := newLMLEval(g.X(), g.Y(), g.Kernel(), fixed, DefaultBounds())
		e.prior = &p
		theta := []float64{math.Log(0.2), math.Log(0.6), math.Log(1.5), math.Log(0.03)}
		grad := make([]float64, 4)
		if _, err := e.objective(theta, grad); err != nil {
			t.Fatal(err)
		}
		nf := e.nFree()
		f := func(th []float64) float64 {
			full := append(append([]float64(nil), th...), theta[nf:]...)
			v, err := e.objective(full, make([]float64, 4))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		checkClose(t, "objective grad", grad[:nf], fdGrad(f, theta[:nf], fdStep), fdRel, 1e-6)
	}
}

func TestPathGrad(t *testing.T) {
	rng := newRNG(25)
	for _, k := range allKernels(3) {
		g := testProblem(t, k, 15, 0.01, 26)
		paths, err := g.SamplePaths(rng, 3, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			x := randDense(rng, 1, 3).RawRowView(0)
			dst := make([]float64, 3)
			v := p.Grad(x, dst)
			checkClose(t, "path value", []float64{v}, []float64{p.Eval(x)}, 1e-12, 1e-14)
			checkClose(t, kname(k)+" path grad", dst, fdGrad(p.Eval, x, fdStep), fdRel, fdAbs)
		}
	}
}

// PredictGrad gives the same values as Predict and the same gradient as
// PredictVJP.
func TestPredictGrad(t *testing.T) {
	rng := newRNG(19)
	const q, d, s = 3, 2, 4
	g := testProblem(t, NewSE([]float64{0.3, 0.4}, 1), 20, 0.02, 18)
	c, err := g.Condition(randDense(rng, s, d))
	if err != nil {
		t.Fatal(err)
	}
	XB := randDense(rng, q, d)
	A, b, S, vjp := c.PredictGrad(XB)
	A0, b0, S0 := c.Predict(XB)
	checkClose(t, "A", denseData(A), denseData(A0), 0, 0)
	checkClose(t, "b", b, b0, 0, 0)
	checkClose(t, "S", denseData(S), denseData(S0), 0, 0)
	gA := mat.NewDense(q, s, randVec(rng, q*s))
	gb := randVec(rng, q)
	gS := mat.NewDense(q, q, randVec(rng, q*q))
	for rep := 0; rep < 2; rep++ { // vjp may be called repeatedly
		checkClose(t, "vjp", denseData(vjp(gA, gb, gS)), denseData(c.predictVJP(XB, gA, gb, gS)), 1e-14, 1e-15)
	}
}

// LML gradient against central differences at random hyper-parameters
// spanning the fit's start box and beyond (short and long length-scales,
// small and large signal and noise variances), not only at the data's own.
func TestLMLGradRandomPoints(t *testing.T) {
	rng := newRNG(26)
	logU := func(a, b float64) float64 { return math.Log(a) + rng.Float64()*(math.Log(b)-math.Log(a)) }
	for _, k0 := range kernels(3) {
		base := testProblem(t, k0, 30, 0.01, 27)
		for trial := 0; trial < 6; trial++ {
			theta := []float64{logU(0.05, 2), logU(0.05, 2), logU(0.05, 2), logU(0.2, 5), logU(1e-4, 0.5)}
			lml := func(th []float64) *GP {
				g, err := New(k0.WithParams(th[:4]), math.Exp(th[4]), base.X(), base.Y())
				if err != nil {
					t.Fatal(err)
				}
				return g
			}
			g := lml(theta)
			if g.Jitter() > 0 {
				t.Fatalf("θ = %.3g needed jitter; the FD check wants a smooth point", theta)
			}
			got, err := g.logMarginalLikelihoodGrad()
			if err != nil {
				t.Fatal(err)
			}
			fd := fdGrad(func(th []float64) float64 { return lml(th).logMarginalLikelihood() }, theta, fdStep)
			checkClose(t, fmt.Sprintf("%s θ=%.3g LML grad", kname(k0), theta), got, fd, fdRel, 1e-6)
		}
	}
}

// The gradient L-BFGS sees: F(u) = −(LML + log prior)/n through the box
// transform θ_i = lo_i + (hi_i−lo_i) sigmoid(u_i), against central
// differences in u, with the noise free and fixed, at random starts of the
// fit (randomStart's box mapped to u) and at points deep in the sigmoid's
// tails (|u| = 6, where ∂θ/∂u is 2.5e-3 of its centre value): ℓ_1 at its
// lower bound and the last free parameter (σ_n², or σ_s² with fixed noise)
// at its upper one, both well conditioned. (Near the
// opposite ends, ℓ → 100 with σ_n² → 1e-6, K is so ill-conditioned that
// round-off swamps a finite difference.)
func TestFitUObjectiveGrad(t *testing.T) {
	rng := newRNG(28)
	for _, k := range kernels(2) {
		g := testProblem(t, k, 25, 0.02, 29)
		p := defaultPrior()
		for _, fixed := range []float64{0, 0.02} {
			e := newLMLEval(g.X(), g.Y(), g.Kernel(), fixed, DefaultBounds())
			e.prior = &p
			nf := e.nFree()
			theta, gtheta := make([]float64, 4), make([]float64, 4)
			F := func(u []float64) float64 {
				v := e.uObjective(u, make([]float64, nf), theta, gtheta)
				if math.IsInf(v, 0) {
					t.Fatalf("objective failed at u = %v", u)
				}
				return v
			}
			for trial := 0; trial < 4; trial++ {
				u := e.toU(e.randomStart(rng))
				if trial == 3 {
					u[0], u[nf-1] = -6, 6
				}
				got := make([]float64, nf)
				e.uObjective(u, got, theta, gtheta)
				checkClose(t, fmt.Sprintf("%s fixed=%g u=%.3g ∂F/∂u", kname(k), fixed, u), got, fdGrad(F, u, fdStep), fdRel, 1e-9)
			}
		}
	}
}
