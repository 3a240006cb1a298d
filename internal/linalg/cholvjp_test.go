package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCholeskyVJP(t *testing.T) {
	// loss(Σ) = Σ_ij W_ij L_ij with L = chol(Σ); check ∂loss/∂Σ against
	// symmetric finite differences.
	const n = 4
	rng := rand.New(rand.NewPCG(7, 7))
	B := make([]float64, n*n)
	for i := range B {
		B[i] = rng.NormFloat64()
	}
	S := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				S[i*n+j] += B[i*n+k] * B[j*n+k]
			}
			if i == j {
				S[i*n+j] += 1
			}
		}
	}
	W := make([]float64, n*n)
	for i := range W {
		W[i] = rng.NormFloat64()
	}
	loss := func(S []float64) float64 {
		l := make([]float64, n*n)
		if j, err := Cholesky(l, S, n); err != nil || j.Abs != 0 {
			t.Fatal("not PD")
		}
		v := 0.0
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				v += W[i*n+j] * l[i*n+j]
			}
		}
		return v
	}
	l := make([]float64, n*n)
	if _, err := Cholesky(l, S, n); err != nil {
		t.Fatal(err)
	}
	G := CholeskyVJP(l, append([]float64(nil), W...), n)
	h := 1e-6
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			Sp := append([]float64(nil), S...)
			Sm := append([]float64(nil), S...)
			Sp[i*n+j] += h
			Sp[j*n+i] = Sp[i*n+j]
			Sm[i*n+j] -= h
			Sm[j*n+i] = Sm[i*n+j]
			fd := (loss(Sp) - loss(Sm)) / (2 * h)
			want := G[i*n+j]
			if i != j {
				want += G[j*n+i] // a symmetric perturbation moves both entries
			}
			if math.Abs(fd-want) > 1e-6*math.Max(1, math.Abs(fd)) {
				t.Errorf("∂/∂Σ[%d][%d]: %v, finite difference %v", i, j, want, fd)
			}
		}
	}
}
