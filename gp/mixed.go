package gp

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// Mixed is a kernel for inputs with categorical coordinates: the product of
// a stationary ARD kernel k_C (SE or Matérn-5/2) on the continuous
// coordinates C and an exponentiated overlap (Hamming) kernel with one
// length-scale per categorical coordinate j ∈ D,
//
//	k(x, y) = σ_s² · k_C(x_C, y_C)/k_C(0) · Π_{j∈D} exp(−[c_j(x) ≠ c_j(y)]/ℓ_j),
//
// as in CoCaBO (Ru et al., ICML 2020) and BoTorch's MixedSingleTaskGP. A
// categorical coordinate with n_j choices is a number in [0,1] whose bin
// c_j(u) = min(⌊u·n_j⌋, n_j−1) is the choice: only equality of bins
// matters, so the kernel is piecewise constant along it (GradX is 0 there).
// Each factor is positive definite (exp(−[a≠b]/ℓ) is the SE kernel with
// length-scale √ℓ on one-hot codes of the choices), hence so is k.
//
// Params() = [log ℓ_1, ..., log ℓ_d, log σ_s²] in coordinate order: ℓ_i is
// the continuous length-scale for i ∈ C and the categorical one for i ∈ D,
// so Mixed satisfies the Kernel contract (NumParams = d+1) and Fit fits all
// of them.
type Mixed struct {
	cats     []int        // n_j per coordinate, 0 for continuous ones
	cont     []int        // indices of the continuous coordinates
	base     Kernel       // on the continuous coordinates, σ² = 1; nil if there are none
	rk       radialKernel // base as a radial kernel (Eval and GradX without gathering)
	cinv2    []float64    // 1/ℓ_t² of base, per continuous coordinate t
	logp     []float64
	invl     []float64 // 1/ℓ_j per coordinate (categorical ones used)
	einvl    []float64 // exp(−1/ℓ_j) per coordinate (categorical ones used)
	s2       float64
	isMat    bool
	nChoices int // Σ_j n_j
}

// NewMixed returns the mixed kernel on d = len(cats) coordinates, where
// cats[i] is the number of choices of categorical coordinate i and 0 marks
// a continuous one; matern selects Matérn-5/2 for the continuous factor
// (else SE). lengthscales (len d) and variance are in natural units. It
// panics, like NewSE, on invalid values or when no coordinate is
// categorical (use NewSE or NewMatern52 then).
func NewMixed(cats []int, matern bool, lengthscales []float64, variance float64) *Mixed {
	if len(lengthscales) != len(cats) {
		panic(fmt.Sprintf("gp: NewMixed: %d length-scales for %d coordinates", len(lengthscales), len(cats)))
	}
	a := newARD("NewMixed", lengthscales, variance)
	return mixedFromLog(cats, matern, a.logp)
}

func mixedFromLog(cats []int, matern bool, p []float64) *Mixed {
	d := len(cats)
	m := &Mixed{cats: append([]int(nil), cats...), logp: append([]float64(nil), p...), invl: make([]float64, d), einvl: make([]float64, d), isMat: matern}
	ncat := 0
	for i, n := range cats {
		switch {
		case n < 0:
			panic(fmt.Sprintf("gp: NewMixed: coordinate %d has %d choices", i, n))
		case n == 0:
			m.cont = append(m.cont, i)
		default:
			ncat++
			m.nChoices += n
		}
		m.invl[i] = math.Exp(-p[i])
		m.einvl[i] = math.Exp(-m.invl[i])
	}
	if ncat == 0 {
		panic("gp: NewMixed: no categorical coordinate (use NewSE or NewMatern52)")
	}
	m.s2 = math.Exp(p[d])
	if len(m.cont) > 0 {
		bp := make([]float64, len(m.cont)+1)
		for t, i := range m.cont {
			bp[t] = p[i]
		}
		a := ardFromLog(bp)
		if matern {
			m.rk = &Matern52{a}
		} else {
			m.rk = &SE{a}
		}
		m.base, m.cinv2 = m.rk, a.inv2
	}
	return m
}

// Categories returns the number of choices per coordinate (0 for a
// continuous one); shared, do not modify.
func (k *Mixed) Categories() []int { return k.cats }

// Dim returns d.
func (k *Mixed) Dim() int { return len(k.cats) }

// NumParams returns d+1.
func (k *Mixed) NumParams() int { return len(k.logp) }

// Params returns a copy of the log hyper-parameters.
func (k *Mixed) Params() []float64 { return append([]float64(nil), k.logp...) }

// Variance returns σ_s².
func (k *Mixed) Variance() float64 { return k.s2 }

// WithParams returns a Mixed kernel on the same coordinates with log
// parameters p (len d+1).
func (k *Mixed) WithParams(p []float64) Kernel {
	checkParams(p, k.Dim(), "Mixed")
	return mixedFromLog(k.cats, k.isMat, p)
}

// Bin returns the choice c(u) = min(⌊u·n⌋, n−1) (clamped to 0..n−1) of a
// categorical coordinate u with n choices.
func Bin(u float64, n int) int {
	switch {
	case !(u > 0): // also NaN
		return 0
	case u >= 1:
		return n - 1
	}
	return min(int(u*float64(n)), n-1) // u·n > 0: truncation is ⌊u·n⌋
}

// catFactor returns Π_j exp(−[c_j(x) ≠ c_j(y)]/ℓ_j), a product of the
// precomputed factors exp(−1/ℓ_j) (no exponential per call), and, if
// differ is non-nil, records which categorical coordinates differ.
func (k *Mixed) catFactor(x, y []float64, differ []bool) float64 {
	f := 1.0
	for i, n := range k.cats {
		if n > 0 && Bin(x[i], n) != Bin(y[i], n) {
			f *= k.einvl[i]
			if differ != nil {
				differ[i] = true
			}
		}
	}
	return f
}

// gather copies the continuous coordinates of x into dst.
func (k *Mixed) gather(dst, x []float64) []float64 {
	for t, i := range k.cont {
		dst[t] = x[i]
	}
	return dst
}

// contR2 returns the continuous factor's scaled squared distance
// Σ_{t} (x_{C_t} − y_{C_t})²/ℓ_{C_t}², without gathering the coordinates.
func (k *Mixed) contR2(x, y []float64) float64 {
	var s float64
	for t, i := range k.cont {
		u := x[i] - y[i]
		s += u * u * k.cinv2[t]
	}
	return s
}

// contEval returns k_C(x_C, y_C) with unit variance (1 without continuous
// coordinates).
func (k *Mixed) contEval(x, y []float64) float64 {
	if k.base == nil {
		return 1
	}
	return k.rk.fromR2(k.contR2(x, y))
}

// Eval returns k(x, y).
func (k *Mixed) Eval(x, y []float64) float64 {
	return k.s2 * k.contEval(x, y) * k.catFactor(x, y, nil)
}

// row writes k(x, X_j) for the rows j in [lo, hi) of X into dst (len
// hi−lo), exactly as Eval would, with x's choices binned once.
func (k *Mixed) row(dst, x []float64, X *mat.Dense, lo, hi int) {
	var stack [16]int
	xb := stack[:0]
	for i, n := range k.cats {
		if n > 0 {
			xb = append(xb, Bin(x[i], n))
		}
	}
	for j := lo; j < hi; j++ {
		y := X.RawRowView(j)
		cf, t := 1.0, 0
		for i, n := range k.cats {
			if n > 0 {
				if Bin(y[i], n) != xb[t] {
					cf *= k.einvl[i]
				}
				t++
			}
		}
		dst[j-lo] = k.s2 * k.contEval(x, y) * cf
	}
}

// GradX writes ∂k/∂x into dst (0 along categorical coordinates) and returns
// k(x, y): ∂k/∂x_i = σ_s²·cat·dk_C/d(r²)·2(x_i−y_i)/ℓ_i² for i ∈ C.
func (k *Mixed) GradX(dst, x, y []float64) float64 {
	clear(dst[:k.Dim()])
	f := k.s2 * k.catFactor(x, y, nil)
	if k.base == nil {
		return f
	}
	kc, dk := k.rk.dFromR2(k.contR2(x, y))
	for t, i := range k.cont {
		dst[i] = f * (2 * dk * (x[i] - y[i]) * k.cinv2[t])
	}
	return f * kc
}

// ParamGrad writes ∂k/∂log ℓ_i (for a categorical coordinate k·[differ]/ℓ_i)
// and ∂k/∂log σ_s² = k into dst and returns k(x, y).
func (k *Mixed) ParamGrad(dst, x, y []float64) float64 {
	d := k.Dim()
	clear(dst[:d+1])
	differ := make([]bool, d)
	cf := k.s2 * k.catFactor(x, y, differ)
	kc := 1.0
	if k.base != nil {
		c := len(k.cont)
		buf := make([]float64, 3*c+1)
		g := buf[2*c:]
		kc = k.base.ParamGrad(g, k.gather(buf[:c], x), k.gather(buf[c:2*c], y))
		for t, i := range k.cont {
			dst[i] = cf * g[t]
		}
	}
	v := cf * kc
	for i, n := range k.cats {
		if n > 0 && differ[i] {
			dst[i] = v * k.invl[i]
		}
	}
	dst[d] = v
	return v
}

// SampleFrequencies draws frequencies for the continuous factor (unit
// variance) in the continuous columns and leaves the categorical columns 0.
// On its own it therefore describes only k_C: GP.SamplePaths adds the
// categorical factor with per-choice random phases (see sampleChoicePhases),
// which makes its paths draws of the full mixed kernel.
func (k *Mixed) SampleFrequencies(rng *rand.Rand, m int) *mat.Dense {
	w := mat.NewDense(m, k.Dim(), nil)
	if k.base == nil {
		return w
	}
	om := k.base.SampleFrequencies(rng, m)
	for r := 0; r < m; r++ {
		for t, i := range k.cont {
			w.Set(r, i, om.At(r, t))
		}
	}
	return w
}

// sampleChoicePhases draws, for each of m random features and each
// categorical coordinate j, a phase per choice a, Ω_j[a] ~ N(0, 1/ℓ_j)
// independently. Then for a ≠ b, Ω_j[a]−Ω_j[b] ~
// N(0, 2/ℓ_j) and E cos(Ω_j[a]−Ω_j[b]) = exp(−1/ℓ_j), so adding
// Σ_j Ω_j[c_j(x)] to a random Fourier feature's argument multiplies its
// covariance by the overlap factor exactly (random features on the one-hot
// embedding). The result holds, per feature, the phases of every choice of
// every categorical coordinate in coordinate order.
func (k *Mixed) sampleChoicePhases(rng *rand.Rand, m int) []float64 {
	per := k.nChoices
	out := make([]float64, m*per)
	for r := 0; r < m; r++ {
		o := r * per
		for i, n := range k.cats {
			sd := math.Sqrt(k.invl[i])
			for a := 0; a < n; a++ {
				out[o+a] = rng.NormFloat64() * sd
			}
			o += n
		}
	}
	return out
}
