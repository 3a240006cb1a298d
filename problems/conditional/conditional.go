// Package conditional holds benchmarks with a conditional space (issue 32),
// each with its flattened twin, the same function on the space where every
// parameter is always active (the function ignores those of other
// branches), to measure what the conditions are worth:
//
//   - "cond/branches" (and "cond/branches-flat"): three branches of a
//     categorical parameter, each with its own active parameters
//     (sdk.Condition), and one shared parameter; 7 coordinates.
//   - "cond/hartmann" (and "cond/hartmann-flat"): the shape of a tuning
//     problem — six shared parameters (Hartmann-6, mirrored differently
//     per branch), an optimizer-like categorical with three choices, two
//     of which have one parameter of their own; 9 coordinates.
//
// A conditional objective refuses (returns an error for) a point where an
// inactive parameter is not NaN or an active one is, so a study that sends
// it an inactive value fails visibly.
package conditional

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
)

// Prefix starts the problems' names.
const Prefix = "cond/"

// problem is one conditional benchmark: its space, conditional or
// flattened, its function of the active parameters (native units; the
// inactive ones are NaN or, flattened, ignored) and its maximum f*.
type problem struct {
	params  func(flat bool) []sdk.Param
	f       func(x []float64) float64
	optimum float64
}

// problems are the benchmarks, by name without Prefix or "-flat".
var problems = map[string]problem{
	"branches": {branchesParams, branches, branchesOptimum},
	"hartmann": {hartmannParams, hartmann, hartmannOptimum},
}

// branchesOptimum is f* of cond/branches, reached in branch c at
// y = (0.8, 0.3), z = 0.3.
const branchesOptimum = 1.2

func on(parent string, values ...string) *sdk.Condition {
	return &sdk.Condition{Parent: parent, Values: values}
}

// flatten drops the conditions of ps when flat.
func flatten(ps []sdk.Param, flat bool) []sdk.Param {
	if flat {
		for i := range ps {
			ps[i].ActiveIf = nil
		}
	}
	return ps
}

// branchesParams is cond/branches' space: branch a uses x1, x2; b uses x1,
// k; c uses y1, y2; z is shared.
func branchesParams(flat bool) []sdk.Param {
	return flatten([]sdk.Param{
		{Name: "branch", Kind: sdk.Categorical, Choices: []string{"a", "b", "c"}},
		{Name: "x1", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("branch", "a", "b")},
		{Name: "x2", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("branch", "a")},
		{Name: "k", Kind: sdk.Int, Low: 1, High: 5, ActiveIf: on("branch", "b")},
		{Name: "y1", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("branch", "c")},
		{Name: "y2", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("branch", "c")},
		{Name: "z", Kind: sdk.Float, Low: 0, High: 1},
	}, flat)
}

// branches is cond/branches (maximized): branch a a broad bowl (max 0.9),
// b a bowl over x1 and the integer k (max 0.8), c a peak (max 1.2, the
// optimum) that is low over most of its square; z is shared.
func branches(x []float64) float64 {
	shared := -0.5 * sq(x[6]-0.3)
	switch int(x[0]) {
	case 0:
		return 0.9 - sq(x[1]-0.2) - sq(x[2]-0.7) + shared
	case 1:
		return 0.8 - sq(x[1]-0.6) - 0.05*sq(x[3]-3) + shared
	}
	return branchesOptimum*math.Exp(-3*(sq(x[4]-0.8)+sq(x[5]-0.3))) + shared
}

// hartmannOptimum is f* of cond/hartmann: Hartmann-6's maximum, reached
// with optimizer = momentum, u at Hartmann-6's maximizer and momentum =
// 0.75.
var hartmannOptimum = hartmann6.Optimum

// hartmann6 is Hartmann-6 in maximization form.
var hartmann6 = testfunc.Hartmann6()

// hartmannParams is cond/hartmann's space: an optimizer-like categorical,
// six shared parameters u1…u6, a momentum for "momentum" only and a beta
// for "adam" only.
func hartmannParams(flat bool) []sdk.Param {
	ps := []sdk.Param{{Name: "optimizer", Kind: sdk.Categorical, Choices: []string{"sgd", "momentum", "adam"}}}
	for j := 1; j <= 6; j++ {
		ps = append(ps, sdk.Param{Name: fmt.Sprintf("u%d", j), Kind: sdk.Float, Low: 0, High: 1})
	}
	return flatten(append(ps,
		sdk.Param{Name: "momentum", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("optimizer", "momentum")},
		sdk.Param{Name: "beta", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("optimizer", "adam")},
	), flat)
}

// hartmann is cond/hartmann (maximized): Hartmann-6 over the shared
// parameters, mirrored along one of them per branch so that each branch
// has its best shared values elsewhere, plus a branch's own term:
//
//	sgd:      H6(u1, 1−u2, u3, …, u6) − 0.4                      (max 2.92)
//	momentum: H6(u) − 0.5 (momentum − 0.75)²                     (max f* = 3.32)
//	adam:     H6(1−u1, u2, …, u6) − 0.2 − 0.5 (beta − 0.3)²     (max 3.12)
func hartmann(x []float64) float64 {
	u := slices.Clone(x[1:7])
	var own float64
	switch int(x[0]) {
	case 0:
		u[1], own = 1-u[1], -0.4
	case 1:
		own = -0.5 * sq(x[7]-0.75)
	default:
		u[0], own = 1-u[0], -0.2-0.5*sq(x[8]-0.3)
	}
	v, err := hartmann6.Eval(u)
	if err != nil { // u is in the unit cube: Evaluate checked x
		panic(err)
	}
	return v + own
}

func sq(v float64) float64 { return v * v }

// Objective is one conditional problem or its flattened twin.
type Objective struct {
	name string // without Prefix and "-flat"
	flat bool
}

// names are the problems' names, sorted.
func names() []string {
	var out []string
	for _, n := range slices.Sorted(maps.Keys(problems)) {
		out = append(out, Prefix+n, Prefix+n+"-flat")
	}
	return out
}

// New opens the problem called name.
func New(name string) (*Objective, error) {
	base, flat := strings.CutSuffix(strings.TrimPrefix(name, Prefix), "-flat")
	if _, ok := problems[base]; !ok || !strings.HasPrefix(name, Prefix) {
		return nil, fmt.Errorf("unknown problem %q: the conditional problems are %s", name, strings.Join(names(), ", "))
	}
	return &Objective{name: base, flat: flat}, nil
}

// All opens every problem, keyed by name.
func All() map[string]sdk.Objective {
	m := map[string]sdk.Objective{}
	for _, n := range names() {
		m[n], _ = New(n)
	}
	return m
}

// Info implements sdk.Objective.
func (o *Objective) Info(context.Context) (sdk.Info, error) {
	name, opt := Prefix+o.name, problems[o.name].optimum
	if o.flat {
		name += "-flat"
	}
	return sdk.Info{Name: name, Params: problems[o.name].params(o.flat), Optimum: &opt}, nil
}

// Keys lists the run parameters Configure accepts.
func (o *Objective) Keys() []string { return []string{"seed", "noise_var"} }

// Configure implements sdk.Configurable: the problems are noise-free, so
// "seed" and "noise_var" (which the host always sends) are accepted and
// ignored.
func (o *Objective) Configure(_ context.Context, params map[string]string) error {
	for k := range params {
		if k != "seed" && k != "noise_var" {
			return fmt.Errorf("unknown parameter %q (accepted: seed, noise_var)", k)
		}
	}
	return nil
}

// Evaluate implements sdk.Objective. The conditional problem refuses a
// point whose inactive parameters are not NaN, or whose active ones are.
func (o *Objective) Evaluate(_ context.Context, x []float64) (float64, error) {
	p := problems[o.name]
	ps := p.params(o.flat)
	if len(x) != len(ps) {
		return math.NaN(), fmt.Errorf("got %d coordinates, want %d", len(x), len(ps))
	}
	if !slices.Contains([]float64{0, 1, 2}, x[0]) {
		return math.NaN(), fmt.Errorf("%s %v is not a choice index", ps[0].Name, x[0])
	}
	for i, a := range sdk.Space(ps).Active(x) {
		lo, hi := ps[i].Bounds()
		switch {
		case a == math.IsNaN(x[i]): // an inactive parameter reached the objective, or an active one is missing
			return math.NaN(), fmt.Errorf("parameter %s: value %v but active=%v", ps[i].Name, x[i], a)
		case a && !(x[i] >= lo && x[i] <= hi):
			return math.NaN(), fmt.Errorf("parameter %s = %v outside [%v, %v]", ps[i].Name, x[i], lo, hi)
		}
	}
	return p.f(x), nil
}

// EvaluateNoiseFree implements sdk.NoiseFree: the problems have no noise.
func (o *Objective) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	return o.Evaluate(ctx, x)
}
