package tes

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// toyGP returns a GP with an SE kernel (length-scale ell, unit variance) on
// n uniform points in [0,1]^d observing a smooth test function with noise
// variance noise.
func toyGP(t testing.TB, seed uint64, n, d int, ell, noise float64) *gp.GP {
	t.Helper()
	X, y := toyData(seed, n, d, noise)
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = ell
	}
	g, err := gp.New(gp.NewSE(ls, 1), noise, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// checkFuncGrad checks grad, f's gradient at X, against central finite
// differences of f (step 1e-6, tolerance 1e-5 + 1e-4·|FD|); name prefixes
// the errors.
func checkFuncGrad(t *testing.T, name string, f *Func, X, grad *mat.Dense) {
	t.Helper()
	const h = 1e-6
	q, d := X.Dims()
	for i := 0; i < q; i++ {
		for j := 0; j < d; j++ {
			old := X.At(i, j)
			X.Set(i, j, old+h)
			fp := f.Eval(X, nil)
			X.Set(i, j, old-h)
			fm := f.Eval(X, nil)
			X.Set(i, j, old)
			fd := (fp - fm) / (2 * h)
			if math.Abs(fd-grad.At(i, j)) > 1e-5+1e-4*math.Abs(fd) {
				t.Errorf("%s: ∂α/∂x[%d,%d] = %.8g, FD %.8g", name, i, j, grad.At(i, j), fd)
			}
		}
	}
}

// randBatch returns q uniform points in [0,1]^d.
func randBatch(rng *rand.Rand, q, d int) *mat.Dense {
	b := mat.NewDense(q, d, nil)
	for i := 0; i < q; i++ {
		for j := 0; j < d; j++ {
			b.Set(i, j, rng.Float64())
		}
	}
	return b
}

// toyData returns toyGP's n observations: X uniform in [0,1]^d and y a
// smooth additive function plus noise of variance noise.
func toyData(seed uint64, n, d int, noise float64) (*mat.Dense, []float64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := rng.Float64()
			X.Set(i, j, v)
			s += math.Sin(5*v+float64(j)) + 0.5*math.Cos(9*v*v)
		}
		y[i] = s/math.Sqrt(float64(d)) + math.Sqrt(noise)*rng.NormFloat64()
	}
	return X, y
}
