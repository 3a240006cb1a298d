package tes

import (
	"math"
	"math/rand/v2"

	"github.com/tesbo/tesbo/acq"
)

// MVNSettings controls the randomized quasi-Monte-Carlo estimator of
// multivariate normal probabilities P(X ≤ b), X ~ N(0, Σ) (Genz 1992,
// "Numerical computation of multivariate normal probabilities", with the
// Gibson–Glasbey–Elston variable reordering). The zero value is the default.
type MVNSettings struct {
	// Shifts is the number M of independent random shifts of the lattice;
	// the estimate is their mean and its standard error their standard
	// deviation over √M. Zero means 16 (fewer shifts make the standard
	// error itself too noisy to be trusted at 3σ).
	Shifts int
	// MinPoints is the number of lattice points per shift of the first
	// pass (each used with its antithetic twin); it doubles until the error
	// target is met. Zero means 16.
	MinPoints int
	// MaxPoints caps the lattice points per shift. Zero means 1024.
	MaxPoints int
	// AbsTol and RelTol: stop when 3·SE ≤ max(AbsTol, RelTol·p). Zero means
	// 1e-3 and 0.05: p(x*) only weights the terms of α, so a few per cent
	// relative error is ample, and it keeps the estimates at |X*| = 50
	// (49-dimensional integrals) fast (docs/results/README.md,
	// "Measurements behind the code").
	AbsTol, RelTol float64
}

func (s MVNSettings) withDefaults() MVNSettings {
	if s.Shifts <= 1 {
		s.Shifts = 16
	}
	if s.MinPoints <= 0 {
		s.MinPoints = 16
	}
	if s.MaxPoints <= 0 {
		s.MaxPoints = 1024
	}
	if s.MaxPoints < s.MinPoints {
		s.MaxPoints = s.MinPoints
	}
	if s.AbsTol <= 0 {
		s.AbsTol = 1e-3
	}
	if s.RelTol <= 0 {
		s.RelTol = 0.05
	}
	return s
}

// degenerateTol: a conditional variance below this fraction of the
// variable's own variance marks it as a deterministic function of the
// variables before it (near-duplicate maximizers give such differences).
const degenerateTol = 1e-10

// mvnCDF estimates P(X ≤ b) for X ~ N(0, Σ) (Σ n×n row-major, full) and
// returns the estimate and its standard error. Variables whose conditional
// variance vanishes (singular Σ) contribute the indicator of their
// conditional mean lying below the bound.
func mvnCDF(rng *rand.Rand, sigma []float64, n int, b []float64, s MVNSettings) (p, se float64) {
	s = s.withDefaults()
	if n == 0 {
		return 1, 0
	}
	l, bb, degen := genzCholesky(sigma, n, b)
	if n == 1 {
		if degen[0] {
			if bb[0] >= 0 {
				return 1, 0
			}
			return 0, 0
		}
		return acq.NormCDF(bb[0] / l[0]), 0
	}
	// Richtmyer generator: frac(k √prime_i).
	gen := make([]float64, n-1)
	for i := range gen {
		r := math.Sqrt(float64(primes[i%len(primes)]))
		gen[i] = r - math.Floor(r)
	}
	shift := make([]float64, n-1)
	y := make([]float64, n)
	est := make([]float64, s.Shifts)
	w := make([]float64, n-1)
	for pts := s.MinPoints; ; pts *= 2 {
		for m := range est {
			for i := range shift {
				shift[i] = rng.Float64()
			}
			sum := 0.0
			for k := 1; k <= pts; k++ {
				for i := range w {
					v := float64(k)*gen[i] + shift[i]
					v -= math.Floor(v)
					w[i] = math.Abs(2*v - 1) // periodizing (tent) transform
				}
				sum += genzPoint(l, bb, degen, n, w, y, false)
				sum += genzPoint(l, bb, degen, n, w, y, true) // antithetic
			}
			est[m] = sum / float64(2*pts)
		}
		p, se = meanSE(est)
		if 3*se <= math.Max(s.AbsTol, s.RelTol*p) || pts*2 > s.MaxPoints {
			return p, se
		}
	}
}

// genzPoint evaluates Genz's integrand at w ∈ [0,1]^{n−1} (1 − w if anti).
func genzPoint(l, b []float64, degen []bool, n int, w, y []float64, anti bool) float64 {
	f := 1.0
	for i := 0; i < n; i++ {
		s := 0.0
		row := l[i*n : i*n+i]
		for j, v := range row {
			s += v * y[j]
		}
		var e float64
		if degen[i] {
			if s <= b[i] {
				e = 1
			} else {
				return 0
			}
			y[i] = 0
			continue
		}
		e = acq.NormCDF((b[i] - s) / l[i*n+i])
		if e <= 0 {
			return 0
		}
		f *= e
		if i < n-1 {
			u := w[i]
			if anti {
				u = 1 - u
			}
			u *= e
			if u <= 0 {
				u = math.SmallestNonzeroFloat64
			}
			if u >= 1 {
				u = 1 - 1e-16
			}
			y[i] = normQuantile(u)
		}
	}
	return f
}

// genzCholesky returns the Cholesky factor (row-major, lower) of Σ after the
// Gibson–Glasbey–Elston reordering — at each step the remaining variable
// with the smallest conditional probability Φ(b̃_j) goes first, using the
// truncated expected values of the variables already placed — with the
// bounds permuted to match, and marks degenerate variables.
func genzCholesky(sigma []float64, n int, b []float64) (l, bb []float64, degen []bool) {
	c := append([]float64(nil), sigma[:n*n]...)
	bb = append([]float64(nil), b[:n]...)
	l = make([]float64, n*n)
	degen = make([]bool, n)
	y := make([]float64, n)
	swap := func(i, j int) {
		if i == j {
			return
		}
		bb[i], bb[j] = bb[j], bb[i]
		for k := 0; k < n; k++ { // rows of c and l
			c[i*n+k], c[j*n+k] = c[j*n+k], c[i*n+k]
			l[i*n+k], l[j*n+k] = l[j*n+k], l[i*n+k]
		}
		for k := 0; k < n; k++ { // columns of c
			c[k*n+i], c[k*n+j] = c[k*n+j], c[k*n+i]
		}
	}
	for i := 0; i < n; i++ {
		best, bestP := i, math.Inf(1)
		for j := i; j < n; j++ {
			v := c[j*n+j]
			s := 0.0
			for k := 0; k < i; k++ {
				v -= l[j*n+k] * l[j*n+k]
				s += l[j*n+k] * y[k]
			}
			pj := 1.0 // degenerate: place last
			if v > degenerateTol*c[j*n+j] && v > 0 {
				pj = acq.NormCDF((bb[j] - s) / math.Sqrt(v))
			}
			if pj < bestP {
				best, bestP = j, pj
			}
		}
		swap(i, best)
		v := c[i*n+i]
		s := 0.0
		for k := 0; k < i; k++ {
			v -= l[i*n+k] * l[i*n+k]
			s += l[i*n+k] * y[k]
		}
		if !(v > degenerateTol*c[i*n+i]) || !(v > 0) {
			degen[i] = true
			y[i] = 0
			continue
		}
		d := math.Sqrt(v)
		l[i*n+i] = d
		for j := i + 1; j < n; j++ {
			t := c[j*n+i]
			for k := 0; k < i; k++ {
				t -= l[j*n+k] * l[i*n+k]
			}
			l[j*n+i] = t / d
		}
		// Expected value of the standardized variable truncated above at b̃.
		bt := (bb[i] - s) / d
		lam, _ := truncMoments(bt) // E[Z | Z ≤ bt] = −φ(bt)/Φ(bt)
		y[i] = -lam
	}
	return l, bb, degen
}

func meanSE(x []float64) (mean, se float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	ss := 0.0
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1) / float64(len(x)))
}

// primes are the first 100 primes (Richtmyer lattice generators).
var primes = []int{2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71,
	73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139, 149, 151, 157, 163, 167, 173,
	179, 181, 191, 193, 197, 199, 211, 223, 227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281,
	283, 293, 307, 311, 313, 317, 331, 337, 347, 349, 353, 359, 367, 373, 379, 383, 389, 397, 401, 409,
	419, 421, 431, 433, 439, 443, 449, 457, 461, 463, 467, 479, 487, 491, 499, 503, 509, 521, 523, 541}
