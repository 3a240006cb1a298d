package acq

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// fixtureGP returns a GP on n points in [0,1]^d with y = a smooth function
// plus small noise, SE kernel (ℓ = 0.3, σ_s² = 1), noise variance 1e-4.
func fixtureGP(t testing.TB, n, d int, seed uint64) *gp.GP {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	X := mat.NewDense(n, d, nil)
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		s := 0.0
		for j := 0; j < d; j++ {
			v := rng.Float64()
			X.Set(i, j, v)
			s += math.Sin(3*v+float64(j)) + 0.5*v*v
		}
		y[i] = s/float64(d) + 0.01*rng.NormFloat64()
	}
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.3
	}
	g, err := gp.New(gp.NewSE(ls, 1), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func maxY(g *gp.GP) float64 {
	b := math.Inf(-1)
	for _, y := range g.Y() {
		b = math.Max(b, y)
	}
	return b
}

// checkGrad compares the analytic gradient of f at X with central finite
// differences, with a relative tolerance on each component (absolute below
// a floor of tol·max|grad|).
func checkGrad(t *testing.T, name string, f Func, X *mat.Dense, h, tol float64) {
	t.Helper()
	q, d := X.Dims()
	G := mat.NewDense(q, d, nil)
	f.Eval(X, G)
	scale := 0.0
	for _, v := range G.RawMatrix().Data {
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 {
		t.Fatalf("%s: zero gradient at the test point, choose another", name)
	}
	Xp := mat.DenseCopyOf(X)
	for j := 0; j < q; j++ {
		for i := 0; i < d; i++ {
			x0 := X.At(j, i)
			Xp.Set(j, i, x0+h)
			fp := f.Eval(Xp, nil)
			Xp.Set(j, i, x0-h)
			fm := f.Eval(Xp, nil)
			Xp.Set(j, i, x0)
			fd := (fp - fm) / (2 * h)
			if diff := math.Abs(fd - G.At(j, i)); diff > tol*math.Max(math.Abs(fd), scale) {
				t.Errorf("%s: ∂/∂x[%d][%d] analytic %.10g, central difference %.10g", name, j, i, G.At(j, i), fd)
			}
		}
	}
}
