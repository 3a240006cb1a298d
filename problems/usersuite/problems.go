package usersuite

import (
	"fmt"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

// bump is a Gaussian bump h·exp(−‖u−c‖²/(2w²)) in unit-cube coordinates.
type bump struct {
	c    []float64
	w, h float64
}

func (b bump) at(u []float64) float64 {
	s := 0.0
	for i, v := range u {
		d := v - b.c[i]
		s += d * d
	}
	return b.h * math.Exp(-s/(2*b.w*b.w))
}

func sumBumps(bs []bump, u []float64) float64 {
	s := 0.0
	for _, b := range bs {
		s += b.at(u)
	}
	return s
}

// floats returns d Float parameters x0..x{d−1} on [lo, hi].
func floats(d int, lo, hi float64) []sdk.Param {
	ps := make([]sdk.Param, d)
	for i := range ps {
		ps[i] = sdk.Param{Name: fmt.Sprintf("x%d", i), Kind: sdk.Float, Low: lo, High: hi}
	}
	return ps
}

// toUnit maps native x of Float parameters on [lo, hi] to [0,1].
func toUnit(x []float64, lo, hi float64) []float64 {
	u := make([]float64, len(x))
	for i, v := range x {
		u[i] = (v - lo) / (hi - lo)
	}
	return u
}

func fromUnit(u []float64, lo, hi float64) []float64 {
	x := make([]float64, len(u))
	for i, v := range u {
		x[i] = lo + v*(hi-lo)
	}
	return x
}

// rosenbrock is Σ 100(x_{i+1} − x_i²)² + (1 − x_i)², minimum 0 at 1.
func rosenbrock(x []float64) float64 {
	s := 0.0
	for i := 0; i+1 < len(x); i++ {
		a, b := x[i+1]-x[i]*x[i], 1-x[i]
		s += 100*a*a + b*b
	}
	return s
}

// build returns the suite. Problems whose maximizer is not known in closed
// form (sums of overlapping bumps) get it by refine, from the peak of the
// tallest bump.
func build() []*Problem {
	var ps []*Problem
	add := func(p *Problem) { ps = append(ps, p) }

	// Multi-modal: a broad low mode that is easy to find and a narrow
	// tall one that is not.
	b2 := []bump{{[]float64{0.25, 0.3}, 0.25, 1}, {[]float64{0.8, 0.75}, 0.05, 1.5}, {[]float64{0.3, 0.82}, 0.1, 1.2}}
	add(refined(&Problem{Name: "bumps2", Doc: "2-d, a broad mode, a medium one and a narrow tallest one",
		Params: floats(2, 0, 1), F: func(x []float64) float64 { return sumBumps(b2, x) }}, b2[1].c))

	b4 := []bump{{[]float64{0.2, 0.2, 0.7, 0.4}, 0.3, 1}, {[]float64{0.75, 0.6, 0.25, 0.7}, 0.12, 1.4},
		{[]float64{0.5, 0.9, 0.5, 0.1}, 0.15, 1.2}, {[]float64{0.9, 0.1, 0.9, 0.9}, 0.2, 0.8}}
	add(refined(&Problem{Name: "bumps4-offset", Doc: "4-d bumps on [−5, 5]⁴ read as 1000 + 10·f (offset 1e3), noise 1% of the range",
		Params: floats(4, -5, 5), NoiseSD: 0.14,
		F: func(x []float64) float64 { return 1000 + 10*sumBumps(b4, toUnit(x, -5, 5)) }}, fromUnit(b4[1].c, -5, 5)))

	b8 := []bump{{[]float64{0.3, 0.3, 0.3, 0.3, 0.7, 0.7, 0.7, 0.7}, 0.35, 1},
		{[]float64{0.7, 0.2, 0.6, 0.8, 0.3, 0.5, 0.4, 0.2}, 0.25, 1.3},
		{[]float64{0.1, 0.8, 0.9, 0.2, 0.5, 0.1, 0.8, 0.6}, 0.3, 0.9}}
	add(refined(&Problem{Name: "bumps8", Doc: "8-d, three wide modes",
		Params: floats(8, 0, 1), F: func(x []float64) float64 { return sumBumps(b8, x) }}, b8[1].c))

	// Curved ridges (Rosenbrock), minimized, raw and scaled by 1e-3.
	add(&Problem{Name: "rosen3", Doc: "3-d Rosenbrock on [−2, 2]³ (curved ridge, values up to ~1e4), minimized",
		Params: floats(3, -2, 2), Minimize: true, F: rosenbrock, Best: []float64{1, 1, 1}, Opt: 0})
	add(&Problem{Name: "rosen6-milli", Doc: "6-d Rosenbrock × 1e-3 on [−2, 2]⁶, minimized (values from 0 to ~10)",
		Params: floats(6, -2, 2), Minimize: true, F: func(x []float64) float64 { return 1e-3 * rosenbrock(x) },
		Best: []float64{1, 1, 1, 1, 1, 1}, Opt: 0})

	// Plateaus: flat almost everywhere, a small peak on an upper plateau.
	add(refined(&Problem{Name: "plateau2", Doc: "2-d: a low and a high plateau (a steep step at x0 = 0.6) and a small peak of width 0.06 on the high one",
		Params: floats(2, 0, 1), F: plateau2}, []float64{0.85, 0.2}))
	add(&Problem{Name: "steps5", Doc: "5-d: a bump quantized to 8 levels (flat terraces); the top terrace is a ball of radius 0.23",
		Params: floats(5, 0, 1), F: steps5, Best: []float64{0.6, 0.4, 0.7, 0.3, 0.5}, Opt: 1})

	// Hyper-parameter-like: LogFloat and Int parameters.
	add(&Problem{Name: "hpo4", Doc: "4-d tuning surface: learning rate (LogFloat 1e-5–1), layers (Int 1–8), units (Int 8–512), dropout (Float 0–0.8); minimized error with f* = 0.08",
		Params: []sdk.Param{{Name: "lr", Kind: sdk.LogFloat, Low: 1e-5, High: 1}, {Name: "layers", Kind: sdk.Int, Low: 1, High: 8},
			{Name: "units", Kind: sdk.Int, Low: 8, High: 512}, {Name: "dropout", Kind: sdk.Float, Low: 0, High: 0.8}},
		Minimize: true, F: hpo4, Best: []float64{math.Pow(10, -2.5), 4, 128, 0.3}, Opt: 0.08})
	add(&Problem{Name: "throughput3", Doc: "3-d: two LogFloat parameters spanning 6 decades, values up to 1e6",
		Params: []sdk.Param{{Name: "a", Kind: sdk.LogFloat, Low: 1e-6, High: 1}, {Name: "b", Kind: sdk.LogFloat, Low: 1e-3, High: 1e3},
			{Name: "c", Kind: sdk.Float, Low: 0, High: 1}},
		F: throughput3, Best: []float64{1e-4, 10, 0.7}, Opt: 1e6})

	// Heavy-tailed outputs: exp of a quadratic, from 0 to ~1e10.
	add(&Problem{Name: "heavytail2", Doc: "2-d: exp(24‖u − c‖²) − 1, minimized; values from 0 to ~3e9 (heavy-tailed)",
		Params: floats(2, 0, 1), Minimize: true, F: heavytail2, Best: []float64{0.3, 0.65}, Opt: 0})

	// Noise up to 10% of the range.
	b3 := []bump{{[]float64{0.2, 0.7, 0.5}, 0.2, 1}, {[]float64{0.7, 0.3, 0.8}, 0.15, 1.25}, {[]float64{0.5, 0.5, 0.1}, 0.25, 0.9}}
	add(refined(&Problem{Name: "noisy-bumps3", Doc: "3-d bumps with noise of 10% of the range (σ = 0.125)",
		Params: floats(3, 0, 1), NoiseSD: 0.125, F: func(x []float64) float64 { return sumBumps(b3, x) }}, b3[1].c))
	add(&Problem{Name: "noisy-additive6", Doc: "6-d: a sum of one-dimensional sines plus a bump at their joint maximum, noise 5% of the range",
		Params: floats(6, 0, 1), NoiseSD: 0.2, F: additive6, Best: additive6Best(), Opt: additive6(additive6Best())})

	// Failing regions.
	b4f := []bump{{[]float64{0.55, 0.55, 0.3, 0.7}, 0.15, 1.3}, {[]float64{0.2, 0.3, 0.6, 0.3}, 0.25, 1}}
	add(refined(&Problem{Name: "fail4", Doc: "4-d bumps; evaluations fail where x0 + x1 > 1.2, next to the best mode",
		Params: floats(4, 0, 1), F: func(x []float64) float64 { return sumBumps(b4f, x) },
		Fails: func(x []float64) bool { return x[0]+x[1] > 1.2 }}, b4f[0].c))
	add(refined(&Problem{Name: "fail2", Doc: "2-d slope and bump; evaluations fail inside a disc of radius 0.2 around (0.5, 0.5), the optimum is just outside it",
		Params: floats(2, 0, 1), F: fail2,
		Fails: func(x []float64) bool { return math.Hypot(x[0]-0.5, x[1]-0.5) < 0.2 }}, []float64{0.72, 0.5}))

	// Many parameters, few that matter.
	add(&Problem{Name: "sparse12", Doc: "12-d: a quadratic bowl in 4 parameters, the other 8 almost irrelevant, minimized",
		Params: floats(12, 0, 1), Minimize: true, F: sparse12, Best: sparse12Best(), Opt: 0})
	// Many local modes around one global trend.
	add(&Problem{Name: "wiggly5", Doc: "5-d: a quadratic bowl with a cosine ripple of 10 periods per unit (many local modes)",
		Params: floats(5, 0, 1), F: wiggly5, Best: []float64{0.35, 0.55, 0.45, 0.65, 0.4}, Opt: 0.5})
	return ps
}

func plateau2(x []float64) float64 {
	step := 0.5 * (1 + math.Tanh(40*(x[0]-0.6)))
	d := (x[0]-0.85)*(x[0]-0.85) + (x[1]-0.2)*(x[1]-0.2)
	return step + 0.5*math.Exp(-d/(2*0.06*0.06))
}

func steps5(x []float64) float64 {
	c := []float64{0.6, 0.4, 0.7, 0.3, 0.5}
	s := 0.0
	for i, v := range x {
		s += (v - c[i]) * (v - c[i])
	}
	return math.Floor(8*math.Min(1, 1.2*math.Exp(-s/0.3))) / 8
}

func hpo4(x []float64) float64 {
	l := math.Log10(x[0]) + 2.5
	layers := x[1] - 4
	units := (math.Log2(x[2]) - 7) / 2
	drop := x[3] - 0.3
	return 0.08 + 0.02*l*l + 0.01*layers*layers + 0.03*units*units + 0.2*drop*drop + 0.02*l*drop
}

func throughput3(x []float64) float64 {
	a, b, c := math.Log10(x[0])+4, math.Log10(x[1])-1, x[2]-0.7
	return 1e6 * math.Exp(-a*a/2-b*b/3-8*c*c)
}

func heavytail2(x []float64) float64 {
	d := (x[0]-0.3)*(x[0]-0.3) + (x[1]-0.65)*(x[1]-0.65)
	return math.Expm1(24 * d)
}

// additive6's sines: w_i sin(3u_i + φ_i), maximal at u_i = (π/2 − φ_i)/3.
var (
	add6W   = []float64{1, 0.8, 0.6, 0.5, 0.4, 0.3}
	add6Phi = []float64{0.2, -0.5, 1.0, 0.0, -1.0, 0.6}
)

func additive6Best() []float64 {
	u := make([]float64, 6)
	for i := range u {
		u[i] = (math.Pi/2 - add6Phi[i]) / 3
	}
	return u
}

func additive6(x []float64) float64 {
	s, d := 0.0, 0.0
	best := additive6Best()
	for i, v := range x {
		s += add6W[i] * math.Sin(3*v+add6Phi[i])
		d += (v - best[i]) * (v - best[i])
	}
	return s + 0.5*math.Exp(-d/(2*0.1*0.1))
}

func fail2(x []float64) float64 {
	d := (x[0]-0.72)*(x[0]-0.72) + (x[1]-0.5)*(x[1]-0.5)
	return 0.5*x[0] + math.Exp(-d/(2*0.08*0.08))
}

func sparse12Best() []float64 {
	u := make([]float64, 12)
	copy(u, []float64{0.3, 0.7, 0.45, 0.6})
	for i := 4; i < 12; i++ {
		u[i] = 0.5
	}
	return u
}

func sparse12(x []float64) float64 {
	best := sparse12Best()
	s := 0.0
	for i, v := range x {
		w := 1.0
		if i >= 4 {
			w = 0.01
		}
		s += w * (v - best[i]) * (v - best[i])
	}
	return s
}

func wiggly5(x []float64) float64 {
	c := []float64{0.35, 0.55, 0.45, 0.65, 0.4}
	s := 0.0
	for i, v := range x {
		t := v - c[i]
		s += -t*t + 0.1*math.Cos(20*math.Pi*t)
	}
	return s
}
