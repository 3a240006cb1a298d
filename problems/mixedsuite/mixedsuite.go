// Package mixedsuite is the mixed-space suite of tesbo's benchmark:
// objectives with Categorical parameters next to Float, Int and LogFloat
// ones. It holds the two synthetic mixed functions of CoCaBO (Ru, Alvi,
// Nguyen, Osborne & Roberts, ICML 2020), Func2C and Func3C, and three of
// the suite's own: a tuning surface whose best learning rate depends on the
// optimizer choice, Branin shifted and offset by a categorical, and a 6-d
// Ackley with four categoricals of five unordered levels (625 combinations,
// beyond the acquisition optimizer's exact enumeration).
//
// Every problem is minimized, noise-free, and states its optimum f* and a
// minimizer in native units (the tests check both). Names are
// "mixed/<name>". Each problem also comes as "mixed/<name>-onehot": the
// same function with every categorical replaced by one Float in [0,1] per
// choice, the largest of which is the choice — the one-hot relaxation
// baselines such as "one-hot EI" optimize (Garrido-Merchán &
// Hernández-Lobato 2020 round the same way).
package mixedsuite

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tesbo/tesbo/sdk"
)

// Prefix starts every problem's name.
const Prefix = "mixed/"

// OneHot ends the name of a problem's one-hot variant.
const OneHot = "-onehot"

// Problem is one objective of the suite.
type Problem struct {
	Name, Doc string
	Params    []sdk.Param
	// F is the objective in native units (categoricals as indices).
	F func(x []float64) float64
	// Best is a minimizer and Opt = F(Best) the optimum f*.
	Best []float64
	Opt  float64
	// Init and Iters are the default budget of `tesbo-host bench --suite
	// mixed`.
	Init, Iters int
}

func cat(name string, choices ...string) sdk.Param {
	return sdk.Param{Name: name, Kind: sdk.Categorical, Choices: choices}
}

func float(name string, lo, hi float64) sdk.Param {
	return sdk.Param{Name: name, Kind: sdk.Float, Low: lo, High: hi}
}

// CoCaBO's component functions of X = 2x, x ∈ [−1, 1]², scaled as in its
// code: Rosenbrock/300, six-hump camel/10, Beale/50.
func rosen(x1, x2 float64) float64 { return (100*(x2-x1*x1)*(x2-x1*x1) + (x1-1)*(x1-1)) / 300 }

func camel(x1, x2 float64) float64 {
	return ((4-2.1*x1*x1+x1*x1*x1*x1/3)*x1*x1 + x1*x2 + (-4+4*x2*x2)*x2*x2) / 10
}

func beale(x1, x2 float64) float64 {
	a, b, c := 1.5-x1+x1*x2, 2.25-x1+x1*x2*x2, 2.625-x1+x1*x2*x2*x2
	return (a*a + b*b + c*c) / 50
}

// component is CoCaBO's choice h among Rosenbrock (0), six-hump camel (1)
// and Beale (any other level), at X.
func component(h, x1, x2 float64) float64 {
	switch h {
	case 0:
		return rosen(x1, x2)
	case 1:
		return camel(x1, x2)
	}
	return beale(x1, x2)
}

// camelMin is the six-hump camel's minimum, at (±0.0898420131, ∓0.7126564030).
const camelMin = -1.0316284534898774

var camelArg = []float64{0.0898420131003 / 2, -0.7126564030207 / 2} // x = X/2

// func2C: h1 ∈ 3 levels, h2 ∈ 5 levels, x ∈ [−1,1]².
func func2C(x []float64) float64 {
	X1, X2 := 2*x[2], 2*x[3]
	return component(x[0], X1, X2) + component(x[1], X1, X2)
}

// func3C: func2C plus h3 ∈ 4 levels adding 5·camel (0), 2·Rosenbrock (1)
// or h3·Beale (2, 3).
func func3C(x []float64) float64 {
	X1, X2 := 2*x[3], 2*x[4]
	f := component(x[0], X1, X2) + component(x[1], X1, X2)
	switch x[2] {
	case 0:
		return f + 5*camel(X1, X2)
	case 1:
		return f + 2*rosen(X1, X2)
	}
	return f + x[2]*beale(X1, X2)
}

// hpo5: a tuning surface: optimizer × activation × learning rate × layers
// × dropout; the best learning rate depends on the optimizer.
var (
	hpoOptBase = []float64{0.12, 0.06, 0.02, 0.04} // sgd, momentum, adam, rmsprop
	hpoBestLR  = []float64{-1, -1.5, -3, -2.5}     // log10 of each one's best rate
	hpoAct     = []float64{0, 0.03, 0.08}          // relu, tanh, sigmoid
)

func hpo5(x []float64) float64 {
	o, a := int(x[0]), int(x[1])
	dl := math.Log10(x[2]) - hpoBestLR[o]
	return 0.05 + hpoOptBase[o] + hpoAct[a] + 0.04*dl*dl + 0.02*math.Abs(x[3]-3) + 0.3*(x[4]-0.25)*(x[4]-0.25)
}

// braninShift: Branin with x1 shifted by δ_c and offset by o_c for a
// categorical c of 4 levels; only level 1 reaches Branin's minimum.
var (
	shiftD = []float64{0, 2, -3, 1}
	shiftO = []float64{0.5, 0, 1, 0.3}
)

func branin(x1, x2 float64) float64 {
	b, c, t := 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 1/(8*math.Pi)
	v := x2 - b*x1*x1 + c*x1 - 6
	return v*v + 10*(1-t)*math.Cos(x1) + 10
}

func braninShift(x []float64) float64 {
	c := int(x[0])
	return branin(x[1]+shiftD[c], x[2]) + shiftO[c]
}

// ackleyCat: Ackley on z ∈ R⁶, z = (v_1(c_1), ..., v_4(c_4), x_1, x_2),
// where each categorical's five levels take the values {−1, −½, 0, ½, 1}
// in a different order (the order of the levels carries no meaning).
var ackleyLevels = [4][5]float64{
	{0.5, -1, 1, 0, -0.5},
	{-0.5, 0, 1, 0.5, -1},
	{1, 0.5, -0.5, -1, 0},
	{0, 1, -1, -0.5, 0.5},
}

func ackleyCat(x []float64) float64 {
	z := make([]float64, 6)
	for j := 0; j < 4; j++ {
		z[j] = ackleyLevels[j][int(x[j])]
	}
	z[4], z[5] = x[4], x[5]
	var s2, sc float64
	for _, v := range z {
		s2 += v * v
		sc += math.Cos(2 * math.Pi * v)
	}
	n := float64(len(z))
	return -20*math.Exp(-0.2*math.Sqrt(s2/n)) - math.Exp(sc/n) + 20 + math.E
}

// Problems returns the suite's problems in a fixed order (new values each
// call).
func Problems() []*Problem {
	h3 := []string{"rosenbrock", "camel", "beale"}
	h5 := []string{"rosenbrock", "camel", "beale", "beale2", "beale3"}
	lv := []string{"l0", "l1", "l2", "l3", "l4"}
	ps := []*Problem{
		{Name: "func2c", Doc: "CoCaBO's Func2C: two categoricals (3 and 5 levels) choose component functions of x ∈ [−1,1]²",
			Params: []sdk.Param{cat("h1", h3...), cat("h2", h5...), float("x1", -1, 1), float("x2", -1, 1)},
			F:      func2C, Best: []float64{1, 1, camelArg[0], camelArg[1]}, Opt: 0.2 * camelMin},
		{Name: "func3c", Doc: "CoCaBO's Func3C: three categoricals (3, 5 and 4 levels) and x ∈ [−1,1]²",
			Params: []sdk.Param{cat("h1", h3...), cat("h2", h5...), cat("h3", "camel5", "rosenbrock2", "beale2", "beale3"), float("x1", -1, 1), float("x2", -1, 1)},
			F:      func3C, Best: []float64{1, 1, 0, camelArg[0], camelArg[1]}, Opt: 0.7 * camelMin},
		{Name: "hpo5", Doc: "tuning surface: optimizer (4) × activation (3) × learning rate (LogFloat) × layers (Int) × dropout; the best rate depends on the optimizer",
			Params: []sdk.Param{cat("optimizer", "sgd", "momentum", "adam", "rmsprop"), cat("activation", "relu", "tanh", "sigmoid"),
				{Name: "lr", Kind: sdk.LogFloat, Low: 1e-5, High: 1}, {Name: "layers", Kind: sdk.Int, Low: 1, High: 6}, float("dropout", 0, 0.8)},
			F: hpo5, Best: []float64{2, 0, 1e-3, 3, 0.25}, Opt: 0.07},
		{Name: "branin-shift", Doc: "Branin with x1 shifted and the value offset by a 4-level categorical; only level 1 reaches f* = 0.397887",
			Params: []sdk.Param{cat("variant", "a", "b", "c", "d"), float("x1", -5, 10), float("x2", 0, 15)},
			F:      braninShift, Best: []float64{1, math.Pi - 2, 2.275}, Opt: 0.39788735772973816},
		{Name: "ackley-cat", Doc: "6-d Ackley: four 5-level categoricals with unordered levels (625 combinations) and x ∈ [−1,1]²",
			Params: []sdk.Param{cat("c1", lv...), cat("c2", lv...), cat("c3", lv...), cat("c4", lv...), float("x1", -1, 1), float("x2", -1, 1)},
			F:      ackleyCat, Best: []float64{3, 1, 4, 0, 0, 0}, Opt: 0},
	}
	for _, p := range ps {
		p.Init, p.Iters = max(6, 2*len(p.Params)), 30
	}
	return ps
}

// Names lists the suite's objectives (with Prefix): every problem, then
// every one-hot variant.
func Names() []string {
	var out, oh []string
	for _, p := range Problems() {
		out = append(out, Prefix+p.Name)
		oh = append(oh, Prefix+p.Name+OneHot)
	}
	return append(out, oh...)
}

// Lookup returns the problem named name (with or without Prefix; a one-hot
// name gives the problem's one-hot variant).
func Lookup(name string) (*Problem, error) {
	short, _ := strings.CutPrefix(name, Prefix)
	base, oneHot := strings.CutSuffix(short, OneHot)
	for _, p := range Problems() {
		if p.Name == base {
			if oneHot {
				return p.oneHot(), nil
			}
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown mixed-suite problem %q: known ones are %v", name, Names())
}

// oneHot returns p with every categorical c replaced by one Float in [0,1]
// per choice ("c=choice"); the choice is the first largest of them.
func (p *Problem) oneHot() *Problem {
	var params []sdk.Param
	var width []int // per original parameter: coordinates it takes
	for _, q := range p.Params {
		if q.Kind != sdk.Categorical {
			params, width = append(params, q), append(width, 1)
			continue
		}
		for _, c := range q.Choices {
			params = append(params, float(q.Name+"="+c, 0, 1))
		}
		width = append(width, len(q.Choices))
	}
	decode := func(x []float64) []float64 {
		out := make([]float64, 0, len(p.Params))
		k := 0
		for i, w := range width {
			if p.Params[i].Kind != sdk.Categorical {
				out = append(out, x[k])
			} else {
				seg := x[k : k+w]
				out = append(out, float64(slices.Index(seg, slices.Max(seg))))
			}
			k += w
		}
		return out
	}
	var best []float64
	for i, q := range p.Params {
		if q.Kind != sdk.Categorical {
			best = append(best, p.Best[i])
			continue
		}
		for c := range q.Choices {
			best = append(best, map[bool]float64{true: 1, false: 0}[c == int(p.Best[i])])
		}
	}
	return &Problem{Name: p.Name + OneHot, Doc: p.Doc + " (one-hot relaxation)", Params: params,
		F: func(x []float64) float64 { return p.F(decode(x)) }, Best: best, Opt: p.Opt, Init: p.Init, Iters: p.Iters}
}

// Objective serves a Problem as an sdk.Objective (and sdk.NoiseFree).
type Objective struct{ p *Problem }

// New opens the problem named name.
func New(name string) (*Objective, error) {
	p, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	return &Objective{p: p}, nil
}

// Info implements sdk.Objective.
func (o *Objective) Info(context.Context) (sdk.Info, error) {
	opt := o.p.Opt
	return sdk.Info{Name: Prefix + o.p.Name, Params: slices.Clone(o.p.Params), Minimize: true, Optimum: &opt}, nil
}

// Evaluate implements sdk.Objective.
func (o *Objective) Evaluate(_ context.Context, x []float64) (float64, error) {
	if !sdk.Space(o.p.Params).Contains(x) {
		return math.NaN(), fmt.Errorf("%s: point %v is outside the space", o.p.Name, x)
	}
	return o.p.F(x), nil
}

// EvaluateNoiseFree implements sdk.NoiseFree (the problems are noise-free).
func (o *Objective) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	return o.Evaluate(ctx, x)
}
