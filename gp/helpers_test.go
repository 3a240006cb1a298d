package gp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)) }

// randDense returns an r×c matrix with entries uniform in [0,1).
func randDense(rng *rand.Rand, r, c int) *mat.Dense {
	m := mat.NewDense(r, c, nil)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m.Set(i, j, rng.Float64())
		}
	}
	return m
}

// testProblem returns a GP on n random points in [0,1]^d with a smooth
// target plus noise.
func testProblem(t testing.TB, k Kernel, n int, noise float64, seed uint64) *GP {
	t.Helper()
	rng := newRNG(seed)
	d := k.Dim()
	X := randDense(rng, n, d)
	y := make([]float64, n)
	for i := range y {
		x := X.RawRowView(i)
		for j, v := range x {
			y[i] += math.Sin(3*v + float64(j))
		}
		y[i] += math.Sqrt(noise) * rng.NormFloat64()
	}
	g, err := New(k, noise, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func kernels(d int) []Kernel {
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.25 + 0.1*float64(i)
	}
	return []Kernel{NewSE(ls, 1.3), NewMatern52(ls, 0.7)}
}

func kname(k Kernel) string { return fmt.Sprintf("%T", k) }

// fdGrad returns the central finite-difference gradient of f at x.
func fdGrad(f func(x []float64) float64, x []float64, h float64) []float64 {
	g := make([]float64, len(x))
	xp := append([]float64(nil), x...)
	for i := range x {
		xp[i] = x[i] + h
		fp := f(xp)
		xp[i] = x[i] - h
		fm := f(xp)
		xp[i] = x[i]
		g[i] = (fp - fm) / (2 * h)
	}
	return g
}

// checkClose fails unless |got−want| ≤ rel·max(|got|,|want|) + abs for every entry.
func checkClose(t testing.TB, name string, got, want []float64, rel, abs float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: length %d, want %d", name, len(got), len(want))
	}
	for i := range got {
		if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > rel*math.Max(math.Abs(got[i]), math.Abs(want[i]))+abs {
			t.Errorf("%s[%d] = %.12g, want %.12g (diff %.3g)", name, i, got[i], want[i], got[i]-want[i])
		}
	}
}

func denseData(m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, 0, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
