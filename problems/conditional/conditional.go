// Package conditional holds a benchmark with a conditional space (issue
// 32): "cond/branches", three branches of a categorical parameter, each
// with its own active parameters (sdk.Condition), and "cond/branches-flat",
// the same function on the flattened space, every parameter always active
// (the function ignores those of other branches), to measure what the
// conditions are worth. The conditional objective refuses (returns an
// error for) a point where an inactive parameter is not NaN or an active
// one is, so a study that sends it an inactive value fails visibly.
package conditional

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tesbo/tesbo/sdk"
)

// Prefix starts the problems' names.
const Prefix = "cond/"

// optimum is f*, reached in branch c at y = (0.8, 0.3), z = 0.3.
const optimum = 1.2

func on(values ...string) *sdk.Condition { return &sdk.Condition{Parent: "branch", Values: values} }

// params are the conditional space: branch a uses x1, x2; b uses x1, k;
// c uses y1, y2; z is shared.
func params(flat bool) []sdk.Param {
	ps := []sdk.Param{
		{Name: "branch", Kind: sdk.Categorical, Choices: []string{"a", "b", "c"}},
		{Name: "x1", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("a", "b")},
		{Name: "x2", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("a")},
		{Name: "k", Kind: sdk.Int, Low: 1, High: 5, ActiveIf: on("b")},
		{Name: "y1", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("c")},
		{Name: "y2", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: on("c")},
		{Name: "z", Kind: sdk.Float, Low: 0, High: 1},
	}
	if flat {
		for i := range ps {
			ps[i].ActiveIf = nil
		}
	}
	return ps
}

// f is the objective (maximized), a function of the active parameters
// only: branch a a broad bowl (max 0.9), b a bowl over x1 and the integer k
// (max 0.8), c a peak (max 1.2, the optimum) that is low over most of its square; z is shared.
func f(x []float64) float64 {
	shared := -0.5 * sq(x[6]-0.3)
	switch int(x[0]) {
	case 0:
		return 0.9 - sq(x[1]-0.2) - sq(x[2]-0.7) + shared
	case 1:
		return 0.8 - sq(x[1]-0.6) - 0.05*sq(x[3]-3) + shared
	}
	return optimum*math.Exp(-3*(sq(x[4]-0.8)+sq(x[5]-0.3))) + shared
}

func sq(v float64) float64 { return v * v }

// Objective is cond/branches or cond/branches-flat.
type Objective struct{ flat bool }

// names are the problems' names.
func names() []string { return []string{Prefix + "branches", Prefix + "branches-flat"} }

// New opens the problem called name.
func New(name string) (*Objective, error) {
	switch name {
	case Prefix + "branches":
		return &Objective{}, nil
	case Prefix + "branches-flat":
		return &Objective{flat: true}, nil
	}
	return nil, fmt.Errorf("unknown problem %q: the conditional problems are %s", name, strings.Join(names(), ", "))
}

// All opens both problems, keyed by name.
func All() map[string]sdk.Objective {
	m := map[string]sdk.Objective{}
	for _, n := range names() {
		m[n], _ = New(n)
	}
	return m
}

// Info implements sdk.Objective.
func (o *Objective) Info(context.Context) (sdk.Info, error) {
	name, opt := Prefix+"branches", optimum
	if o.flat {
		name += "-flat"
	}
	return sdk.Info{Name: name, Params: params(o.flat), Optimum: &opt}, nil
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
	ps := params(o.flat)
	if len(x) != len(ps) {
		return math.NaN(), fmt.Errorf("got %d coordinates, want %d", len(x), len(ps))
	}
	info, _ := o.Info(context.Background())
	v := sdk.Values(info, x)
	for i, a := range sdk.Space(ps).Active(x) {
		if a != v.Active(ps[i].Name) { // an inactive parameter reached the objective, or an active one is missing
			return math.NaN(), fmt.Errorf("parameter %s: value %v but active=%v", ps[i].Name, x[i], a)
		}
	}
	if !slices.Contains([]float64{0, 1, 2}, x[0]) {
		return math.NaN(), fmt.Errorf("branch %v is not a choice index", x[0])
	}
	return f(x), nil
}

// EvaluateNoiseFree implements sdk.NoiseFree: the problems have no noise.
func (o *Objective) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	return o.Evaluate(ctx, x)
}
