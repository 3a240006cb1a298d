package tes

import (
	"math"
	"math/rand/v2"
	"testing"
)

func randEPMixture(rng *rand.Rand, k int) *epMixture {
	e := &epMixture{K: k}
	tot := 0.0
	for i := 0; i < k; i++ {
		p := 0.2 + rng.Float64()
		e.P = append(e.P, p)
		tot += p
		mu := make([]float64, k)
		for j := range mu {
			mu[j] = rng.NormFloat64()
		}
		e.Mu = append(e.Mu, mu)
		e.Sig = append(e.Sig, randSPD(rng, k, 0.05, 0.5))
	}
	for i := range e.P {
		e.P[i] /= tot
	}
	return e
}

func TestGaussInfoGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, q := range []int{1, 2, 4} {
		k := 4
		e := randEPMixture(rng, k)
		A := randMatrix(rng, q, k, 0.7)
		S := randSPD(rng, q, 0.05, 0.3)
		var base []basePoints
		if q == 1 {
			base = bases(k, func() basePoints { return ghBase(1, 16) })
		} else {
			brng := rand.New(rand.NewPCG(1, uint64(q)))
			base = bases(k, func() basePoints { return mcBase(brng, q, 64) })
		}
		f := func(A, S []float64) float64 {
			r, err := e.gaussInfo(A, q, S, 0.01, base, false)
			if err != nil {
				t.Fatal(err)
			}
			return r.Alpha
		}
		r, err := e.gaussInfo(A, q, S, 0.01, base, true)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.Alpha-f(A, S)) > 1e-14 {
			t.Fatalf("q=%d: value differs with and without gradient", q)
		}
		fdCheck(t, "ep q="+string(rune('0'+q)), f, A, S, r.GA, r.GS, q)
	}
}

// TestGaussInfoOneDimExact compares the Gauss–Hermite value at q = 1 with a
// fine trapezoidal integral of Σ p_i N_i log(N_i / q).
func TestGaussInfoOneDimExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	k := 5
	e := randEPMixture(rng, k)
	A := randMatrix(rng, 1, k, 0.8)
	S := []float64{0.02}
	noise := 0.01
	r, err := e.gaussInfo(A, 1, S, noise, bases(k, func() basePoints { return ghBase(1, 32) }), false)
	if err != nil {
		t.Fatal(err)
	}
	ms := make([]float64, k)
	vs := make([]float64, k)
	for i := 0; i < k; i++ {
		for a := 0; a < k; a++ {
			ms[i] += A[a] * e.Mu[i][a]
			for b := 0; b < k; b++ {
				vs[i] += A[a] * e.Sig[i][a*k+b] * A[b]
			}
		}
		vs[i] += S[0] + noise
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range ms {
		lo = math.Min(lo, ms[i]-12*math.Sqrt(vs[i]))
		hi = math.Max(hi, ms[i]+12*math.Sqrt(vs[i]))
	}
	const n = 200000
	h := (hi - lo) / n
	exact := 0.0
	for s := 0; s <= n; s++ {
		y := lo + float64(s)*h
		qy := 0.0
		dens := make([]float64, k)
		for i := range ms {
			dens[i] = math.Exp(-0.5*(y-ms[i])*(y-ms[i])/vs[i]) / math.Sqrt(2*math.Pi*vs[i])
			qy += e.P[i] * dens[i]
		}
		for i := range ms {
			if dens[i] > 0 {
				w := h
				if s == 0 || s == n {
					w /= 2
				}
				exact += w * e.P[i] * dens[i] * math.Log(dens[i]/qy)
			}
		}
	}
	if math.Abs(r.Alpha-exact) > 1e-4 {
		t.Fatalf("Gauss–Hermite α = %.6f, exact %.6f", r.Alpha, exact)
	}
	if h := entropy(e.P); r.Alpha < 0 || r.Alpha > h {
		t.Fatalf("α = %g outside [0, H = %g]", r.Alpha, h)
	}
}

// TestGaussInfoMCAgainstQuadrature: the Monte-Carlo estimate at q = 2 agrees
// with a 40×40 Gauss–Hermite rule within 3 of its reported standard errors.
func TestGaussInfoMCAgainstQuadrature(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	k, q := 4, 2
	e := randEPMixture(rng, k)
	A := randMatrix(rng, q, k, 0.6)
	S := randSPD(rng, q, 0.02, 0.1)
	ref, err := e.gaussInfo(A, q, S, 0.01, bases(k, func() basePoints { return ghBase(q, 40) }), false)
	if err != nil {
		t.Fatal(err)
	}
	brng := rand.New(rand.NewPCG(3, 3))
	mc, err := e.gaussInfo(A, q, S, 0.01, bases(k, func() basePoints { return mcBase(brng, q, 4000) }), false)
	if err != nil {
		t.Fatal(err)
	}
	if mc.SE <= 0 || math.Abs(mc.Alpha-ref.Alpha) > 3*mc.SE {
		t.Fatalf("MC α = %.5f ± %.5f, quadrature %.5f", mc.Alpha, mc.SE, ref.Alpha)
	}
}
