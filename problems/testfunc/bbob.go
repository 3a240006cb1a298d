package testfunc

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// BBOBFunctions is the number of noiseless BBOB functions, f1 … f24.
const BBOBFunctions = 24

// bbobMaxDim bounds the dimension of a BBOB function: its rotations are
// dense d×d matrices (COCO's bbob suite goes to 40).
const bbobMaxDim = 100

// bbobNames are the functions' names in COCO's noiseless definitions.
var bbobNames = [BBOBFunctions]string{
	"sphere", "separable ellipsoid", "separable Rastrigin", "Büche–Rastrigin",
	"linear slope", "attractive sector", "step ellipsoid", "Rosenbrock",
	"rotated Rosenbrock", "ellipsoid", "discus", "bent cigar", "sharp ridge",
	"different powers", "Rastrigin", "Weierstrass", "Schaffers F7",
	"ill-conditioned Schaffers F7", "composite Griewank–Rosenbrock F8F2",
	"Schwefel x·sin(x)", "Gallagher 101 peaks", "Gallagher 21 peaks",
	"Katsuura", "Lunacek bi-Rastrigin",
}

// BBOB returns instance inst ≥ 1 of the noiseless BBOB function f_id
// (1 ≤ id ≤ 24) in d ≥ 2 dimensions on [−5, 5]^d, negated into maximization
// form: Eval returns −f(x), Optimum is −f_opt and Maximizers holds the one
// global minimizer of f.
//
// The functions follow COCO's "Real-Parameter Black-Box Optimization
// Benchmarking: Noiseless Functions Definitions" (Hansen, Finck, Ros and
// Auger), written here from the formulas, with COCO's instance machinery: a
// random optimum x_opt (uniform in [−4, 4]^d), random orthogonal matrices R
// and Q (Gram–Schmidt of Gaussian matrices), the random offset f_opt
// (a Cauchy variate ×100 rounded to two decimals, clipped to ±1000), and
// the transformations T_osz, T_asy^β, Λ^α and the boundary penalty f_pen.
// The random numbers are drawn from this package's own generator seeded by
// (id, d, inst), so instances are COCO-style but not COCO's numbers: a
// tesbo instance 3 is not COCO's instance 3, and f_opt values differ.
//
// Where the minimizer is not x_opt itself the definitions fix it exactly
// and Maximizers says so: f5's lies on the domain's corner x_opt ∈ {±5}^d,
// f8's x_opt is drawn from [−3, 3]^d, f9 and f19 have z = 1 at
// x = Rᵀ1/(2 max(1, √d/8)), f20's is ±t*/2 per coordinate (t* the maximizer of
// t·sin√t near 420.97, computed here, so f20's constant is t*·sin√t*/100
// rather than COCO's rounded 4.189828872724339), f21 and f22's is the highest
// peak's centre, and f24's is ±μ₀/2 = ±1.25 per coordinate.
func BBOB(id, d, inst int) (*Function, error) {
	name := fmt.Sprintf("%s%d", BBOBPrefix, id)
	if id < 1 || id > BBOBFunctions {
		return nil, fmt.Errorf("bbob: no function f%d, want 1 ≤ id ≤ %d", id, BBOBFunctions)
	}
	if d < 2 || d > bbobMaxDim {
		return nil, fmt.Errorf("%s: dimension %d not supported, want 2 ≤ dim ≤ %d", name, d, bbobMaxDim)
	}
	if inst < 1 {
		return nil, fmt.Errorf("%s: instance %d, want a positive number", name, inst)
	}
	b := newBBOBInstance(id, d, inst)
	core, xstar := bbobDefs[id-1](b)
	fopt := b.fopt
	return &Function{
		Name:       name,
		Dim:        d,
		Lower:      box(d, -5),
		Upper:      box(d, 5),
		Optimum:    -fopt,
		Maximizers: [][]float64{xstar},
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return -(core(x) + fopt) },
	}, nil
}

// bbobName returns COCO's name of function f_id ("sphere", …, "Lunacek
// bi-Rastrigin"), or "" for an id outside 1 … 24.
func bbobName(id int) string {
	if id < 1 || id > BBOBFunctions {
		return ""
	}
	return bbobNames[id-1]
}

// Random streams of an instance: each part is drawn from its own generator,
// so adding a part to one function does not move another's numbers.
const (
	streamXopt = iota + 1
	streamFopt
	streamR
	streamQ
	streamExtra // signs, Gallagher's peaks
)

// bbobInstance holds the random parts shared by the BBOB definitions.
type bbobInstance struct {
	id, d, inst int
	xopt        []float64 // uniform in [−4, 4]^d, no coordinate exactly 0
	fopt        float64
}

func newBBOBInstance(id, d, inst int) *bbobInstance {
	b := &bbobInstance{id: id, d: d, inst: inst}
	rng := b.rng(streamXopt)
	b.xopt = make([]float64, d)
	for i := range b.xopt {
		b.xopt[i] = 8*rng.Float64() - 4
		if b.xopt[i] == 0 {
			b.xopt[i] = -1e-5 // as COCO: no coordinate of x_opt is 0
		}
	}
	b.fopt = bbobFopt(b.rng(streamFopt))
	return b
}

// rng returns the generator of one random stream of the instance, seeded by
// a hash of (function, dimension, instance, stream).
func (b *bbobInstance) rng(stream int) *rand.Rand {
	h := splitmix(uint64(b.id))
	h = splitmix(h ^ uint64(b.d))
	h = splitmix(h ^ uint64(b.inst))
	return rand.New(rand.NewPCG(h, splitmix(h^uint64(stream))))
}

// splitmix is the SplitMix64 finalizer, a bijective bit mixer.
func splitmix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// bbobFopt draws f_opt as COCO does: 100 times a Cauchy variate (a ratio of
// two standard normals), rounded to two decimals and clipped to [−1000, 1000].
func bbobFopt(rng *rand.Rand) float64 {
	v := math.Round(10000*rng.NormFloat64()/rng.NormFloat64()) / 100
	return math.Max(-1000, math.Min(1000, v))
}

// rotation returns a random orthogonal d×d matrix (rows), the Gram–Schmidt
// orthonormalization of a standard Gaussian matrix drawn from stream.
func (b *bbobInstance) rotation(stream int) [][]float64 {
	return randomRotation(b.rng(stream), b.d)
}

// randomRotation orthonormalizes the rows of a d×d Gaussian matrix by
// modified Gram–Schmidt, run twice per row so RᵀR = I to rounding.
func randomRotation(rng *rand.Rand, d int) [][]float64 {
	m := make([][]float64, d)
	for i := range m {
		m[i] = make([]float64, d)
		for j := range m[i] {
			m[i][j] = rng.NormFloat64()
		}
	}
	for i := range m {
		for pass := 0; pass < 2; pass++ {
			for k := 0; k < i; k++ {
				dot := 0.0
				for j := range m[i] {
					dot += m[i][j] * m[k][j]
				}
				for j := range m[i] {
					m[i][j] -= dot * m[k][j]
				}
			}
		}
		n := norm(m[i])
		for j := range m[i] {
			m[i][j] /= n
		}
	}
	return m
}

// signs returns a random ±1 vector drawn from rng (COCO's 1±).
func (b *bbobInstance) signs(rng *rand.Rand) []float64 {
	s := make([]float64, b.d)
	for i := range s {
		s[i] = 1
		if rng.Float64() < 0.5 {
			s[i] = -1
		}
	}
	return s
}

// matVec returns m·v in a new slice.
func matVec(m [][]float64, v []float64) []float64 {
	out := make([]float64, len(m))
	for i, row := range m {
		var s float64
		for j, a := range row {
			s += a * v[j]
		}
		out[i] = s
	}
	return out
}

// matTVec returns mᵀ·v in a new slice.
func matTVec(m [][]float64, v []float64) []float64 {
	out := make([]float64, len(m[0]))
	for i, row := range m {
		for j, a := range row {
			out[j] += a * v[i]
		}
	}
	return out
}

// shifted returns x − xopt in a new slice.
func shifted(x, xopt []float64) []float64 {
	z := make([]float64, len(x))
	for i := range x {
		z[i] = x[i] - xopt[i]
	}
	return z
}

// lambda returns the diagonal of Λ^α: λ_i = α^{½·i/(d−1)}, i = 0 … d−1.
func lambda(alpha float64, d int) []float64 {
	return condWeights(alpha, 0.5, d)
}

// condWeights returns c^{p·i/(d−1)}, i = 0 … d−1, the per-coordinate
// conditioning of the ellipsoids.
func condWeights(c, p float64, d int) []float64 {
	w := make([]float64, d)
	for i := range w {
		w[i] = math.Pow(c, p*float64(i)/float64(d-1))
	}
	return w
}

// scale multiplies v by the diagonal w in place and returns v.
func scale(w, v []float64) []float64 {
	for i := range v {
		v[i] *= w[i]
	}
	return v
}

// tosz is COCO's oscillation transformation T_osz applied to one
// coordinate: sign(x)·exp(x̂ + 0.049(sin c₁x̂ + sin c₂x̂)) with x̂ = log|x|
// (0 ↦ 0), c₁ = 10, c₂ = 7.9 for x > 0 and c₁ = 5.5, c₂ = 3.1 otherwise.
func tosz(x float64) float64 {
	if x == 0 {
		return 0
	}
	h := math.Log(math.Abs(x))
	c1, c2 := 5.5, 3.1
	if x > 0 {
		c1, c2 = 10, 7.9
	}
	return math.Copysign(math.Exp(h+0.049*(math.Sin(c1*h)+math.Sin(c2*h))), x)
}

// toszAll applies T_osz to every coordinate of v in place and returns v.
func toszAll(v []float64) []float64 {
	for i, x := range v {
		v[i] = tosz(x)
	}
	return v
}

// tasy applies COCO's asymmetric transformation T_asy^β in place,
// x_i ↦ x_i^{1 + β·i/(d−1)·√x_i} for x_i > 0, and returns v.
func tasy(beta float64, v []float64) []float64 {
	d := len(v)
	for i, x := range v {
		if x > 0 {
			v[i] = math.Pow(x, 1+beta*float64(i)/float64(d-1)*math.Sqrt(x))
		}
	}
	return v
}

// fpen is COCO's boundary penalty Σ max(0, |x_i| − 5)².
func fpen(x []float64) float64 {
	var s float64
	for _, v := range x {
		if e := math.Abs(v) - 5; e > 0 {
			s += e * e
		}
	}
	return s
}

// rastriginSum returns 10(d − Σ cos 2πz_i) + ‖z‖², summed as
// Σ [10(1 − cos 2πz_i) + z_i²] so it is ≥ 0 and exactly 0 at z = 0.
func rastriginSum(z []float64) float64 {
	var s float64
	for _, v := range z {
		s += 10*(1-math.Cos(2*math.Pi*v)) + v*v
	}
	return s
}
