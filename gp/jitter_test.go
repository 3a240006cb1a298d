package gp

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// nuggetSE is the SE kernel minus a relative nugget on exactly coinciding
// inputs, k(x, y) = σ_s² (exp(−r²/2) − δ·[x = y]). For δ > 0 it is not
// positive semi-definite, so on near-duplicate inputs it drives the jitter
// escalation to a level chosen by the test (a valid kernel gets there only
// through round-off, at the 1e-10 level where finite differences drown in
// it). It is a generic kernel: the likelihood takes the ParamGrad path.
type nuggetSE struct {
	Kernel
	delta float64
}

func (k nuggetSE) WithParams(p []float64) Kernel { return nuggetSE{k.Kernel.WithParams(p), k.delta} }

func (k nuggetSE) Eval(x, y []float64) float64 {
	v := k.Kernel.Eval(x, y)
	if slices.Equal(x, y) {
		v -= k.delta * k.Variance()
	}
	return v
}

func (k nuggetSE) ParamGrad(dst, x, y []float64) float64 {
	k.Kernel.ParamGrad(dst, x, y)
	v := k.Eval(x, y)
	dst[k.Dim()] = v // ∂k/∂log σ_s² = k, nugget included
	return v
}

// nearDuplicates returns m random points in [0,1]² each followed by a copy
// moved by 1e-3, and a smooth target at them: with ℓ ≈ 0.3 each pair has a
// kernel-matrix eigenvalue ≈ σ_s² r²/(2ℓ²) ≈ 6e-6 σ_s².
func nearDuplicates(m int, seed uint64) (*mat.Dense, []float64) {
	rng := newRNG(seed)
	X := mat.NewDense(2*m, 2, nil)
	y := make([]float64, 2*m)
	for i := 0; i < m; i++ {
		a, b := rng.Float64(), rng.Float64()
		ang := 2 * math.Pi * rng.Float64()
		X.SetRow(2*i, []float64{a, b})
		X.SetRow(2*i+1, []float64{a + 1e-3*math.Cos(ang), b + 1e-3*math.Sin(ang)})
	}
	for i := range y {
		x := X.RawRowView(i)
		y[i] = math.Sin(3*x[0]) + math.Cos(2*x[1])
	}
	return X, y
}

// With jitter, LogMarginalLikelihoodGrad is the gradient of
// LogMarginalLikelihood as computed (jitter included) — checked by central
// differences of New's likelihood at points where the escalation settles on
// its top level c = maxJitter (δ = 6e-5 against pair eigenvalues ≈ 6e-6
// and σ_n² = 1e-5 leaves an eigenvalue ≈ −4e-5 that the levels up to 1e-5
// cannot lift). Leaving out the jitter's dependence on θ shifts the
// log σ_s² entry by ½ c tr(W) σ_s² ≈ 8 and the log σ_n² entry by a
// relative c = 1e-4, both far outside the tolerance.
func TestLMLGradWithJitter(t *testing.T) {
	X, y := nearDuplicates(6, 81)
	rng := newRNG(82)
	for trial := 0; trial < 3; trial++ {
		ls := []float64{0.25 + 0.15*rng.Float64(), 0.25 + 0.15*rng.Float64()}
		k := nuggetSE{NewSE(ls, 0.7+0.6*rng.Float64()), 6e-5}
		const noise = 1e-5
		g, err := New(k, noise, X, y)
		if err != nil {
			t.Fatal(err)
		}
		if rel := g.chol.jitterRel; math.Abs(rel-maxJitter) > 1e-9*maxJitter {
			t.Fatalf("jitter level %g, want the test to reach %g", rel, maxJitter)
		}
		got, err := g.logMarginalLikelihoodGrad()
		if err != nil {
			t.Fatal(err)
		}
		theta := append(k.Params(), math.Log(noise))
		f := func(th []float64) float64 {
			gg, err := New(k.WithParams(th[:3]), math.Exp(th[3]), X, y)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(gg.chol.jitterRel-g.chol.jitterRel) > 1e-9*maxJitter {
				t.Fatalf("jitter level changed within the finite-difference step: %g vs %g", gg.chol.jitterRel, g.chol.jitterRel)
			}
			return gg.logMarginalLikelihood()
		}
		checkClose(t, "LML grad with jitter", got, fdGrad(f, theta, fdStep), fdRel, 1e-7)
	}
}

// The same for the radial (SE, Matérn) path of lmlGrad, which handles the
// jitter's θ-dependence separately. A valid kernel needs no more than
// round-off-level jitter, so the matrix is made indefinite by a negative
// "noise" −ν = −e^θ_n (an internal device; New rejects it): the diagonal
// term's derivative is then −ν, which the ½ tr(W) σ_n² (1+c) formula
// covers with σ_n² = −ν.
func TestLMLGradWithJitterRadial(t *testing.T) {
	X, y := nearDuplicates(6, 83)
	for _, k0 := range kernels(2) {
		ls := []float64{0.3, 0.35}
		k := k0.WithParams([]float64{math.Log(ls[0]), math.Log(ls[1]), k0.Params()[2]})
		// Pair eigenvalues are ≈ 6e-6 σ_s² (SE) and ≈ 8e-6 σ_s² (Matérn):
		// ν = 5e-5 σ_s² leaves ≈ −4e-5 σ_s², the top jitter level's reach.
		nu := 5e-5 * k.Variance()
		eval := func(th []float64, grad []float64) (float64, float64) {
			kk := k.WithParams(th[:3])
			v, err := lmlGrad(kk, -math.Exp(th[3]), X, y, true, grad, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			c, err := choleskyJitter(lmlMatrix(kk, -math.Exp(th[3]), X), X.RawMatrix().Rows)
			if err != nil {
				t.Fatal(err)
			}
			return v, c.jitterRel
		}
		theta := append(k.Params(), math.Log(nu))
		got := make([]float64, 4)
		_, rel := eval(theta, got)
		if math.Abs(rel-maxJitter) > 1e-9*maxJitter {
			t.Fatalf("%s: jitter level %g, want the test to reach %g", kname(k), rel, maxJitter)
		}
		f := func(th []float64) float64 {
			v, r := eval(th, make([]float64, 4))
			if math.Abs(r-rel) > 1e-9*maxJitter {
				t.Fatalf("jitter level changed within the finite-difference step")
			}
			return v
		}
		checkClose(t, kname(k)+" LML grad with jitter", got, fdGrad(f, theta, fdStep), fdRel, 1e-7)
	}
}

// lmlMatrix returns K_DD + noise·I (row-major) for the test's jitter check.
func lmlMatrix(k Kernel, noise float64, X *mat.Dense) []float64 {
	n, _ := X.Dims()
	K := CrossCov(k, X, X)
	for i := 0; i < n; i++ {
		K.Set(i, i, K.At(i, i)+noise)
	}
	return K.RawMatrix().Data
}
