package testfunc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var (
	bbobTestDims      = []int{2, 5, 10}
	bbobTestInstances = []int{1, 2, 7}
)

func mustBBOB(t testing.TB, id, d, inst int) *Function {
	t.Helper()
	fn, err := BBOB(id, d, inst)
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// Each function at each dimension and instance: the maximizer lies in the
// domain and attains f* = −f_opt, and neither uniform samples nor small
// perturbations of the maximizer (clipped to the domain) exceed it.
func TestBBOBOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for id := 1; id <= BBOBFunctions; id++ {
		for _, d := range bbobTestDims {
			for _, inst := range bbobTestInstances {
				fn := mustBBOB(t, id, d, inst)
				label := fmt.Sprintf("f%d d=%d instance %d", id, d, inst)
				if len(fn.Maximizers) != 1 {
					t.Fatalf("%s: %d maximizers, want 1", label, len(fn.Maximizers))
				}
				xs := fn.Maximizers[0]
				if newBBOBInstance(id, d, inst).fopt != -fn.Optimum {
					t.Errorf("%s: f* = %g is not −f_opt", label, fn.Optimum)
				}
				v, err := fn.Eval(xs)
				if err != nil {
					t.Fatalf("%s: maximizer %v: %v", label, xs, err)
				}
				tol := 1e-9 * (1 + math.Abs(fn.Optimum))
				if math.Abs(v-fn.Optimum) > tol {
					t.Errorf("%s: f(x*) = %.15g, want f* = %.15g", label, v, fn.Optimum)
				}
				above := fn.Optimum + 1e-12*(1+math.Abs(fn.Optimum))
				for i := 0; i < 500; i++ {
					if x := uniform(rng, fn); fn.f(x) > above {
						t.Errorf("%s: f(%v) = %.15g above f* = %.15g", label, x, fn.f(x), fn.Optimum)
						break
					}
				}
				for _, h := range []float64{1e-1, 1e-3, 1e-6, 1e-9} {
					for i := 0; i < 30; i++ {
						x := make([]float64, d)
						for j := range x {
							x[j] = math.Max(-5, math.Min(5, xs[j]+h*rng.NormFloat64()))
						}
						if fn.f(x) > above {
							t.Errorf("%s: f(x* + %g·noise) = %.15g above f* = %.15g", label, h, fn.f(x), fn.Optimum)
							break
						}
					}
				}
			}
		}
	}
}

// The maximizers sit where the definitions put them.
func TestBBOBMaximizerLocations(t *testing.T) {
	for _, d := range bbobTestDims {
		for _, inst := range bbobTestInstances {
			b := newBBOBInstance(1, d, inst)
			within := func(id int, lim float64) {
				for j, v := range mustBBOB(t, id, d, inst).Maximizers[0] {
					if math.Abs(v) > lim {
						t.Errorf("f%d d=%d instance %d: x*_%d = %g outside [−%g, %g]", id, d, inst, j, v, lim, lim)
					}
				}
			}
			for j, v := range b.xopt {
				if v == 0 || math.Abs(v) > 4 {
					t.Errorf("d=%d instance %d: x_opt_%d = %g, want in [−4, 4] \\ {0}", d, inst, j, v)
				}
			}
			within(8, 3)
			within(21, 4)
			within(22, 3.92)
			for j, v := range mustBBOB(t, 5, d, inst).Maximizers[0] {
				if math.Abs(v) != 5 {
					t.Errorf("f5 d=%d instance %d: x*_%d = %g, want ±5", d, inst, j, v)
				}
			}
			for j, v := range mustBBOB(t, 4, d, inst).Maximizers[0] {
				if j%2 == 0 && v <= 0 {
					t.Errorf("f4 d=%d instance %d: x*_%d = %g, want > 0", d, inst, j, v)
				}
			}
			for j, v := range mustBBOB(t, 20, d, inst).Maximizers[0] {
				if math.Abs(math.Abs(v)-4.2096874633/2) > 1e-9 {
					t.Errorf("f20 d=%d instance %d: x*_%d = %.12g, want ±4.2096874633/2", d, inst, j, v)
				}
			}
			for j, v := range mustBBOB(t, 24, d, inst).Maximizers[0] {
				if math.Abs(v) != 1.25 {
					t.Errorf("f24 d=%d instance %d: x*_%d = %g, want ±μ₀/2 = ±1.25", d, inst, j, v)
				}
			}
		}
	}
	// COCO's constant for f20, 4.189828872724339, is t*·sin√t*/100 to its digits.
	if c := schwefelT * math.Sin(math.Sqrt(schwefelT)) / 100; math.Abs(c-4.189828872724339) > 1e-12 {
		t.Errorf("t*·sin√t*/100 = %.16g, COCO's constant 4.189828872724339", c)
	}
}

// Instances are a deterministic function of (function, dimension, instance),
// and different instances differ in optimum, location and landscape.
func TestBBOBInstancesDeterministicAndDistinct(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	for id := 1; id <= BBOBFunctions; id++ {
		for _, d := range bbobTestDims {
			a, b := mustBBOB(t, id, d, 2), mustBBOB(t, id, d, 2)
			c := mustBBOB(t, id, d, 7)
			label := fmt.Sprintf("f%d d=%d", id, d)
			if a.Optimum != b.Optimum || fmt.Sprint(a.Maximizers) != fmt.Sprint(b.Maximizers) {
				t.Errorf("%s: instance 2 built twice differs", label)
			}
			if a.Optimum == c.Optimum && fmt.Sprint(a.Maximizers) == fmt.Sprint(c.Maximizers) {
				t.Errorf("%s: instances 2 and 7 coincide", label)
			}
			same := true
			for i := 0; i < 20; i++ {
				x := uniform(rng, a)
				if a.f(x) != b.f(x) {
					t.Errorf("%s: instance 2 built twice gives %g and %g at %v", label, a.f(x), b.f(x), x)
				}
				same = same && a.f(x)+a.Optimum == c.f(x)+c.Optimum
			}
			if same {
				t.Errorf("%s: instances 2 and 7 have the same landscape", label)
			}
		}
	}
	// Different functions draw different optima for the same instance.
	if mustBBOB(t, 1, 5, 1).Maximizers[0][0] == mustBBOB(t, 2, 5, 1).Maximizers[0][0] {
		t.Error("f1 and f2 instance 1 share x_opt")
	}
}

// R and Q are orthogonal: RᵀR = RRᵀ = I within 1e-12.
func TestBBOBRotationsOrthogonal(t *testing.T) {
	for _, d := range []int{2, 5, 10, 40} {
		for _, inst := range bbobTestInstances {
			b := newBBOBInstance(15, d, inst)
			for _, stream := range []int{streamR, streamQ} {
				m := b.rotation(stream)
				for i := 0; i < d; i++ {
					for k := 0; k < d; k++ {
						var rows, cols float64
						for j := 0; j < d; j++ {
							rows += m[i][j] * m[k][j]
							cols += m[j][i] * m[j][k]
						}
						want := 0.0
						if i == k {
							want = 1
						}
						if math.Abs(rows-want) > 1e-12 || math.Abs(cols-want) > 1e-12 {
							t.Fatalf("d=%d instance %d stream %d: (RRᵀ)_%d%d = %g, (RᵀR) = %g", d, inst, stream, i, k, rows, cols)
						}
					}
				}
			}
			if fmt.Sprint(b.rotation(streamR)) == fmt.Sprint(b.rotation(streamQ)) {
				t.Errorf("d=%d: R = Q", d)
			}
		}
	}
}

// f_opt is COCO's: two decimals, within [−1000, 1000], a Cauchy variate ×100
// (so half of the unclipped values within ±100).
func TestBBOBFoptRange(t *testing.T) {
	const n = 2000
	var inner, clipped int
	for inst := 1; inst <= n; inst++ {
		f := newBBOBInstance(1+inst%BBOBFunctions, 2+inst%9, inst).fopt
		if math.Abs(f) > 1000 || math.IsNaN(f) {
			t.Fatalf("instance %d: f_opt = %g outside [−1000, 1000]", inst, f)
		}
		if c := f * 100; math.Abs(c-math.Round(c)) > 1e-6 {
			t.Errorf("instance %d: f_opt = %.10g has more than two decimals", inst, f)
		}
		if math.Abs(f) <= 100 {
			inner++
		}
		if math.Abs(f) == 1000 {
			clipped++
		}
	}
	// P(|Cauchy| ≤ 1) = 1/2; P(|Cauchy| ≥ 10) = 1 − (2/π)atan 10 ≈ 0.0635.
	// Allow 4 standard errors.
	if p, se := float64(inner)/n, math.Sqrt(0.25/n); math.Abs(p-0.5) > 4*se {
		t.Errorf("%.3f of f_opt within ±100, want 0.5 ± %.3f", p, 4*se)
	}
	pc := 1 - 2/math.Pi*math.Atan(10)
	if p, se := float64(clipped)/n, math.Sqrt(pc*(1-pc)/n); math.Abs(p-pc) > 4*se {
		t.Errorf("%.4f of f_opt clipped to ±1000, want %.4f ± %.4f", p, pc, 4*se)
	}
}

// The transformations match their definitions at points computed by hand.
func TestBBOBTransforms(t *testing.T) {
	for _, c := range []struct{ x, want float64 }{
		{0, 0}, {1, 1}, {-1, -1},
		// x̂ = log 2: exp(x̂ + 0.049(sin 10x̂ + sin 7.9x̂)).
		{2, math.Exp(math.Log(2) + 0.049*(math.Sin(10*math.Log(2))+math.Sin(7.9*math.Log(2))))},
		{-2, -math.Exp(math.Log(2) + 0.049*(math.Sin(5.5*math.Log(2))+math.Sin(3.1*math.Log(2))))},
	} {
		if got := tosz(c.x); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("T_osz(%g) = %.17g, want %.17g", c.x, got, c.want)
		}
	}
	// T_asy^β leaves x ≤ 0 and the first coordinate alone; the last positive
	// coordinate x becomes x^{1+β√x}.
	got := tasy(0.5, []float64{2, -3, 0, 4})
	if want := []float64{2, -3, 0, math.Pow(4, 2)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("T_asy^0.5 = %v, want %v", got, want)
	}
	if l := lambda(100, 3); l[0] != 1 || math.Abs(l[1]-math.Sqrt(10)) > 1e-15 || math.Abs(l[2]-10) > 1e-14 {
		t.Errorf("Λ^100 in 3-d = %v, want 1, √10, 10", l)
	}
	if p := fpen([]float64{6, -7, 5, 0}); p != 1+4 {
		t.Errorf("f_pen = %g, want 5", p)
	}
}

// Two closed-form checks of the landscape away from the optimum.
func TestBBOBClosedForms(t *testing.T) {
	for _, inst := range bbobTestInstances {
		// Sphere: one unit from x* costs exactly 1.
		fn := mustBBOB(t, 1, 5, inst)
		x := append([]float64(nil), fn.Maximizers[0]...)
		x[2] += 1
		if v := mustEval(t, fn, x); math.Abs(v-(fn.Optimum-1)) > 1e-12*(1+math.Abs(fn.Optimum)) {
			t.Errorf("f1 instance %d: f(x* + e₃) = %g, want f* − 1 = %g", inst, v, fn.Optimum-1)
		}
		// Linear slope: the opposite corner costs Σ 10|s_i| = 10 Σ 10^{i/(d−1)}.
		fn = mustBBOB(t, 5, 3, inst)
		opp := []float64{-fn.Maximizers[0][0], -fn.Maximizers[0][1], -fn.Maximizers[0][2]}
		want := fn.Optimum - 10*(1+math.Sqrt(10)+10)
		if v := mustEval(t, fn, opp); math.Abs(v-want) > 1e-9 {
			t.Errorf("f5 instance %d: opposite corner %g, want %g", inst, v, want)
		}
	}
}

func TestBBOBBadArguments(t *testing.T) {
	for _, c := range [][3]int{{0, 2, 1}, {25, 2, 1}, {1, 1, 1}, {1, 101, 1}, {1, 2, 0}, {1, 2, -3}} {
		if _, err := BBOB(c[0], c[1], c[2]); err == nil {
			t.Errorf("BBOB(%d, %d, %d): want an error", c[0], c[1], c[2])
		}
	}
	if bbobName(24) != "Lunacek bi-Rastrigin" || bbobName(1) != "sphere" || bbobName(0) != "" {
		t.Error("BBOBName")
	}
}
