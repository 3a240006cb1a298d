package gp

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// rq is a rational-quadratic ARD kernel written here, outside the package's
// radial fast paths, to exercise the generic Kernel code paths with
// derivatives that are not the package's own:
//
//	k(x, y) = σ_s² (1 + r²/(2a))^(−a),  r² = Σ (x_i−y_i)²/ℓ_i²,  a = 2.
type rq struct{ p []float64 } // [log ℓ..., log σ_s²]

const rqA = 2.0

func (k rq) Dim() int                      { return len(k.p) - 1 }
func (k rq) NumParams() int                { return len(k.p) }
func (k rq) Params() []float64             { return append([]float64(nil), k.p...) }
func (k rq) WithParams(p []float64) Kernel { return rq{append([]float64(nil), p...)} }
func (k rq) Variance() float64             { return math.Exp(k.p[k.Dim()]) }

func (k rq) r2(x, y []float64) float64 {
	var s float64
	for i := 0; i < k.Dim(); i++ {
		t := (x[i] - y[i]) * math.Exp(-k.p[i])
		s += t * t
	}
	return s
}

func (k rq) Eval(x, y []float64) float64 {
	return k.Variance() * math.Pow(1+k.r2(x, y)/(2*rqA), -rqA)
}

// dk/d(r²) = −½ σ_s² (1 + r²/(2a))^(−a−1).
func (k rq) dr2(x, y []float64) (v, dk float64) {
	b := 1 + k.r2(x, y)/(2*rqA)
	v = k.Variance() * math.Pow(b, -rqA)
	return v, -0.5 * v / b
}

func (k rq) GradX(dst, x, y []float64) float64 {
	v, dk := k.dr2(x, y)
	for i := 0; i < k.Dim(); i++ {
		dst[i] = 2 * dk * (x[i] - y[i]) * math.Exp(-2*k.p[i])
	}
	return v
}

func (k rq) ParamGrad(dst, x, y []float64) float64 {
	v, dk := k.dr2(x, y)
	for i := 0; i < k.Dim(); i++ {
		t := (x[i] - y[i]) * math.Exp(-k.p[i])
		dst[i] = -2 * dk * t * t
	}
	dst[k.Dim()] = v
	return v
}

// SampleFrequencies: the RQ kernel is a Gamma(a, rate a) scale mixture of
// SE kernels, so ω = z ⊙ (1/ℓ) · sqrt(τ), z ~ N(0, I), τ ~ Gamma(2, rate 2)
// = (e_1 + e_2)/2 with e_j ~ Exp(1).
func (k rq) SampleFrequencies(rng *rand.Rand, m int) *mat.Dense {
	d := k.Dim()
	w := mat.NewDense(m, d, nil)
	for r := 0; r < m; r++ {
		s := math.Sqrt((rng.ExpFloat64() + rng.ExpFloat64()) / rqA)
		for i := 0; i < d; i++ {
			w.Set(r, i, rng.NormFloat64()*math.Exp(-k.p[i])*s)
		}
	}
	return w
}

// genericKernels: the test's RQ kernel and the package's kernels behind a
// wrapper that hides their fast path.
func genericKernels(d int) []Kernel {
	p := make([]float64, d+1)
	for i := 0; i < d; i++ {
		p[i] = math.Log(0.3 + 0.1*float64(i))
	}
	p[d] = math.Log(0.9)
	out := []Kernel{rq{p}}
	for _, k := range kernels(d) {
		out = append(out, wrapped{k})
	}
	return out
}

// The test kernel's own derivatives (everything below relies on them) and
// its spectral density (Bochner, as TestSampleFrequencies).
func TestRQKernel(t *testing.T) {
	rng := newRNG(91)
	k := genericKernels(3)[0]
	for trial := 0; trial < 5; trial++ {
		x := randDense(rng, 1, 3).RawRowView(0)
		y := randDense(rng, 1, 3).RawRowView(0)
		g := make([]float64, 3)
		k.GradX(g, x, y)
		checkClose(t, "rq GradX", g, fdGrad(func(z []float64) float64 { return k.Eval(z, y) }, x, fdStep), fdRel, fdAbs)
		pg := make([]float64, 4)
		k.ParamGrad(pg, x, y)
		checkClose(t, "rq ParamGrad", pg, fdGrad(func(p []float64) float64 { return k.WithParams(p).Eval(x, y) }, k.Params(), fdStep), fdRel, fdAbs)
	}
	const m = 200000
	W := k.SampleFrequencies(rng, m)
	delta := []float64{0.2, 0.1, 0.3}
	var mean, sq float64
	for i := 0; i < m; i++ {
		c := math.Cos(W.At(i, 0)*delta[0] + W.At(i, 1)*delta[1] + W.At(i, 2)*delta[2])
		mean += c / m
		sq += c * c / m
	}
	se := math.Sqrt((sq - mean*mean) / m)
	if want := k.Eval(delta, []float64{0, 0, 0}) / k.Variance(); math.Abs(mean-want) > 4*se {
		t.Errorf("rq E cos = %.5f, want %.5f (SE %.5f)", mean, want, se)
	}
}
