// Package fidelity serves BoTorch's multi-fidelity test functions,
// AugmentedBranin and AugmentedHartmann (package testfunc), as objectives
// whose fidelity is the step: an evaluation runs Steps steps and reports
// f(x, s = step/Steps) after each through sdk.Report, stopping when the
// host says so, and returns the value of the last step it ran. They are
// minimized and noise-free; their optimum is the full-fidelity one (s =
// 1). A multi-fidelity study (tesbo-host run --multi-fidelity) chooses
// where each evaluation stops; any other study runs them to Steps.
package fidelity

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
)

// Prefix starts every problem's name.
const Prefix = "mf/"

// Steps is the last step of a full evaluation (sdk.Info.MaxStep).
const Steps = 100

// Problem is one multi-fidelity test function.
type Problem struct {
	Name    string // short name; the objective is Prefix+Name
	Low     []float64
	High    []float64
	Optimum float64 // minimum at s = 1
	// F is the function at x (native units) and fidelity s ∈ [0, 1].
	F func(x []float64, s float64) float64
}

var suite = []*Problem{
	{Name: "augmented-branin", Low: []float64{-5, 0}, High: []float64{10, 15}, Optimum: 0.397887357729739,
		F: func(x []float64, s float64) float64 { return testfunc.AugmentedBranin(x[0], x[1], s) }},
	{Name: "augmented-hartmann", Low: make([]float64, 6), High: []float64{1, 1, 1, 1, 1, 1}, Optimum: -3.32236801141552,
		F: testfunc.AugmentedHartmann},
}

// Problems returns the suite.
func Problems() []*Problem { return suite }

// Regret is f(x, 1) − f*: the full-fidelity value's distance to the
// minimum.
func (p *Problem) Regret(x []float64) float64 { return p.F(x, 1) - p.Optimum }

// All opens every problem as an objective keyed by its name (with Prefix),
// for the synthetic plugin.
func All() map[string]sdk.Objective {
	m := map[string]sdk.Objective{}
	for _, p := range suite {
		m[Prefix+p.Name] = &Objective{p: p}
	}
	return m
}

// New opens the problem named name (with Prefix) as an objective.
func New(name string) (*Objective, error) {
	for _, p := range suite {
		if Prefix+p.Name == name {
			return &Objective{p: p}, nil
		}
	}
	names := make([]string, len(suite))
	for i, p := range suite {
		names[i] = Prefix + p.Name
	}
	return nil, fmt.Errorf("unknown multi-fidelity problem %q: known ones are %v", name, names)
}

// Objective serves a Problem: sdk.Objective reporting every step and
// sdk.NoiseFree (the full-fidelity value, for the regret).
type Objective struct{ p *Problem }

// Info implements sdk.Objective.
func (o *Objective) Info(context.Context) (sdk.Info, error) {
	params := make([]sdk.Param, len(o.p.Low))
	for i := range params {
		params[i] = sdk.Param{Name: "x" + strconv.Itoa(i+1), Kind: sdk.Float, Low: o.p.Low[i], High: o.p.High[i]}
	}
	opt := o.p.Optimum
	return sdk.Info{Name: Prefix + o.p.Name, Params: params, Minimize: true, Optimum: &opt, MaxStep: Steps}, nil
}

// Evaluate reports f(x, k/Steps) for k = 1…Steps and returns the last
// value reached (at Steps, or where the host said stop).
func (o *Objective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if err := o.check(x); err != nil {
		return 0, err
	}
	var v float64
	for k := 1; k <= Steps; k++ {
		v = o.p.F(x, float64(k)/Steps)
		prune, err := sdk.Report(ctx, k, v)
		if err != nil || prune {
			return v, err
		}
	}
	return v, nil
}

// EvaluateNoiseFree implements sdk.NoiseFree: f(x, 1).
func (o *Objective) EvaluateNoiseFree(_ context.Context, x []float64) (float64, error) {
	if err := o.check(x); err != nil {
		return 0, err
	}
	return o.p.F(x, 1), nil
}

func (o *Objective) check(x []float64) error {
	if len(x) != len(o.p.Low) {
		return fmt.Errorf("x has %d coordinates, want %d", len(x), len(o.p.Low))
	}
	if slices.ContainsFunc(x, func(v float64) bool { return v != v }) {
		return fmt.Errorf("x has a NaN coordinate")
	}
	return nil
}
