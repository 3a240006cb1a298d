package testfunc

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

func sortedKeys(m map[string]*Function) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Every listed maximizer attains f*.
func TestOptimumAtMaximizers(t *testing.T) {
	fs := allFunctions(t)
	for _, label := range sortedKeys(fs) {
		fn := fs[label]
		if len(fn.Maximizers) == 0 {
			t.Errorf("%s: no maximizer listed", label)
		}
		for _, x := range fn.Maximizers {
			if v := mustEval(t, fn, x); math.Abs(v-fn.Optimum) > 1e-6 {
				t.Errorf("%s: f(%v) = %.12g, want f* = %.12g", label, x, v, fn.Optimum)
			}
		}
	}
}

// f* is an upper bound: no uniform sample and no local maximum reached by
// projected gradient ascent from random starts exceeds it.
func TestNoPointExceedsOptimum(t *testing.T) {
	fs := allFunctions(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, label := range sortedKeys(fs) {
		fn := fs[label]
		samples, starts := 100000, 100
		if strings.Contains(label, "/d=") {
			// The any-dimension extras have analytic f*; in 5 and 10
			// dimensions uniform samples stay far below it anyway.
			samples, starts = 20000, 50
		}
		best := math.Inf(-1)
		for i := 0; i < samples; i++ {
			best = math.Max(best, fn.f(uniform(rng, fn)))
		}
		for i := 0; i < starts && fn.hasGrad(); i++ {
			_, v := refine(fn.grad, uniform(rng, fn), fn.Lower, fn.Upper)
			best = math.Max(best, v)
		}
		if best > fn.Optimum+1e-9*(1+math.Abs(fn.Optimum)) {
			t.Errorf("%s: found f = %.15g above f* = %.15g", label, best, fn.Optimum)
		}
	}
}

// The maximizers are KKT points (zero gradient in free coordinates, pointing
// outward at active bounds) and ascent from them does not improve.
func TestMaximizersAreStationary(t *testing.T) {
	fs := allFunctions(t)
	for _, label := range sortedKeys(fs) {
		fn := fs[label]
		if strings.HasPrefix(label, "ackley") || !fn.hasGrad() {
			continue // the cone tip at 0 has no gradient; bukin has none
		}
		g := make([]float64, fn.Dim)
		for _, x := range fn.Maximizers {
			if _, err := fn.gradient(x, g); err != nil {
				t.Fatal(err)
			}
			for j, gj := range g {
				width := fn.Upper[j] - fn.Lower[j]
				atLo, atHi := x[j] <= fn.Lower[j], x[j] >= fn.Upper[j]
				if (atLo && gj <= 0) || (atHi && gj >= 0) {
					continue
				}
				// |∂f/∂u_j| in unit-cube coordinates, relative to f's scale.
				if math.Abs(gj*width) > 1e-5*(1+math.Abs(fn.Optimum)) {
					t.Errorf("%s: ∂f/∂x_%d = %g at maximizer %v", label, j, gj, x)
				}
			}
			if _, v := refine(fn.grad, x, fn.Lower, fn.Upper); v > fn.Optimum+1e-12*(1+math.Abs(fn.Optimum)) {
				t.Errorf("%s: ascent from the maximizer reached %.17g > f* = %.17g", label, v, fn.Optimum)
			}
		}
	}
}

// Published optima (to their published digits) confirm the constants.
func TestPublishedOptima(t *testing.T) {
	must := func(fn *Function, err error) *Function {
		if err != nil {
			t.Fatal(err)
		}
		return fn
	}
	cases := []struct {
		fn   *Function
		want float64
		tol  float64
	}{
		{Branin(), -0.397887, 1e-6},                   // BoTorch's value
		{Hartmann3(), 3.86278, 1e-5},                  // BoTorch / SFU, 5 digits
		{Hartmann6(), 3.322368, 1e-6},                 // BoTorch's value
		{sixHumpCamel(), 1.0316, 1e-4},                // SFU
		{must(michalewicz(2)), 1.8013, 1e-4},          // SFU
		{must(michalewicz(5)), 4.687658, 1e-6},        // SFU
		{must(michalewicz(10)), 9.66015, 1e-5},        // SFU
		{must(styblinskiTang(3)), 3 * 39.16617, 1e-4}, // −39.16617·d
	}
	for _, c := range cases {
		if math.Abs(c.fn.Optimum-c.want) > c.tol {
			t.Errorf("%s (d=%d): f* = %.10g, published %g", c.fn.Name, c.fn.Dim, c.fn.Optimum, c.want)
		}
	}
	// The published Hartmann-6 maximizer lies in our maximizer's basin.
	h6 := Hartmann6()
	if v := mustEval(t, h6, []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}); math.Abs(v-3.32237) > 1e-5 {
		t.Errorf("hartmann6 at the published x*: %g, want 3.32237", v)
	}
	// Branin's three maximizers in classic units, mapped to the unit square.
	b := Branin()
	for i, x := range [][]float64{{-math.Pi, 12.275}, {math.Pi, 2.275}, {9.42478, 2.475}} {
		u := []float64{(x[0] + 5) / 15, x[1] / 15}
		if v := mustEval(t, b, u); math.Abs(v+0.397887) > 1e-6 {
			t.Errorf("branin maximizer %d: f = %g, want −0.397887", i, v)
		}
	}
}

// Analytic gradients match central finite differences at random points.
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	fs := allFunctions(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, label := range sortedKeys(fs) {
		fn := fs[label]
		if !fn.hasGrad() {
			if label != "bukin" { // non-differentiable on its ridge
				t.Errorf("%s: no gradient", label)
			}
			continue
		}
		g := make([]float64, fn.Dim)
		for trial := 0; trial < 20; trial++ {
			// Keep 1e-3 of the side away from the bounds so the stencil fits.
			x := make([]float64, fn.Dim)
			for j := range x {
				w := fn.Upper[j] - fn.Lower[j]
				x[j] = fn.Lower[j] + w*(1e-3+(1-2e-3)*rng.Float64())
			}
			v, err := fn.gradient(x, g)
			if err != nil {
				t.Fatal(err)
			}
			if fv := mustEval(t, fn, x); v != fv {
				t.Errorf("%s: Grad returned f = %g, Eval %g", label, v, fv)
			}
			for j := range x {
				h := 1e-6 * (fn.Upper[j] - fn.Lower[j])
				xp := append([]float64(nil), x...)
				xm := append([]float64(nil), x...)
				xp[j] += h
				xm[j] -= h
				fd := (fn.f(xp) - fn.f(xm)) / (2 * h)
				scale := math.Max(1, math.Max(math.Abs(fd), math.Abs(g[j])))
				if math.Abs(fd-g[j]) > 2e-5*scale {
					t.Errorf("%s at %v: ∂f/∂x_%d = %.10g, finite difference %.10g", label, x, j, g[j], fd)
				}
			}
		}
	}
}

// GradUnit applies the chain rule for the unit-cube map.
func TestUnitCubeMapping(t *testing.T) {
	fn := sixHumpCamel() // a non-unit, non-square box
	u := []float64{0.3, 0.8}
	x, err := fn.ToNative(u)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(x[0]+1.2) > 1e-15 || math.Abs(x[1]-1.2) > 1e-15 {
		t.Fatalf("ToNative(%v) = %v", u, x)
	}
	back, _ := fn.toUnit(x)
	for j := range u {
		if math.Abs(back[j]-u[j]) > 1e-15 {
			t.Fatalf("ToUnit(ToNative(u)) = %v, want %v", back, u)
		}
	}
	g := make([]float64, 2)
	vu, err := fn.gradUnit(u, g)
	if err != nil {
		t.Fatal(err)
	}
	if vx := mustEval(t, fn, x); vu != vx {
		t.Errorf("GradUnit value %g, Eval %g", vu, vx)
	}
	for j := range u {
		h := 1e-6
		up := append([]float64(nil), u...)
		um := append([]float64(nil), u...)
		up[j] += h
		um[j] -= h
		fp, _ := fn.EvalUnit(up)
		fm, _ := fn.EvalUnit(um)
		if fd := (fp - fm) / (2 * h); math.Abs(fd-g[j]) > 1e-6*math.Max(1, math.Abs(fd)) {
			t.Errorf("∂f/∂u_%d = %g, finite difference %g", j, g[j], fd)
		}
	}
}

func TestBadInputs(t *testing.T) {
	fn := Hartmann3()
	nan := math.NaN()
	for _, x := range [][]float64{
		nil, {0.5, 0.5}, {0.5, 0.5, 0.5, 0.5},
		{nan, 0.5, 0.5}, {0.5, math.Inf(1), 0.5}, {0.5, 0.5, math.Inf(-1)},
		{-0.01, 0.5, 0.5}, {0.5, 1.001, 0.5},
	} {
		if v, err := fn.Eval(x); err == nil {
			t.Errorf("Eval(%v) = %g, want an error", x, v)
		} else if !math.IsNaN(v) {
			t.Errorf("Eval(%v) returned %g with its error, want NaN", x, v)
		}
		if _, err := fn.gradient(x, make([]float64, 3)); err == nil {
			t.Errorf("Grad(%v): want an error", x)
		}
		if _, err := fn.Observe(x, 1e-4, 1); err == nil {
			t.Errorf("Observe(%v): want an error", x)
		}
	}
	if _, err := fn.EvalUnit([]float64{0.5}); err == nil {
		t.Error("EvalUnit with 1 coordinate: want an error")
	}
	if _, err := fn.gradient([]float64{0.5, 0.5, 0.5}, make([]float64, 2)); err == nil {
		t.Error("Grad with a short buffer: want an error")
	}
	// An ulp-sized overshoot of a bound (a host's u·(hi−lo)+lo) is clamped.
	x := []float64{math.Nextafter(1, 2), 0.5, -1e-12}
	v, err := fn.Eval(x)
	if err != nil {
		t.Fatalf("Eval just outside the box: %v", err)
	}
	if want := mustEval(t, fn, []float64{1, 0.5, 0}); v != want {
		t.Errorf("clamped value %g, want %g", v, want)
	}
	if x[0] != math.Nextafter(1, 2) {
		t.Error("Eval modified its input")
	}
	noGrad := &Function{Name: "nograd", Dim: 1, Lower: []float64{0}, Upper: []float64{1}, f: func(x []float64) float64 { return x[0] }}
	if _, err := noGrad.gradient([]float64{0.5}, make([]float64, 1)); !errors.Is(err, errNoGradient) {
		t.Errorf("Grad without a gradient: %v, want ErrNoGradient", err)
	}
}

func TestBadDimensions(t *testing.T) {
	for name, mk := range map[string]func(int) (*Function, error){
		"ackley": ackley, "levy": levy, "rosenbrock": rosenbrock,
		"michalewicz": michalewicz, "styblinskitang": styblinskiTang,
		"griewank": griewank, "rastrigin": rastrigin, "dixonprice": dixonPrice, "powell": powell,
	} {
		for _, d := range []int{-1, 0, 10001} {
			if _, err := mk(d); err == nil {
				t.Errorf("%s(%d): want an error", name, d)
			}
		}
	}
	if _, err := rosenbrock(1); err == nil {
		t.Error("Rosenbrock(1): want an error")
	}
	for _, d := range []int{1, 2, 6, 10} {
		if _, err := powell(d); err == nil {
			t.Errorf("Powell(%d): want an error (blocks of 4)", d)
		}
	}
}
