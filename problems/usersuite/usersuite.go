// Package usersuite is the user suite of tesbo's benchmark: objectives of
// the kinds users bring to a Bayesian-optimization tool rather than the
// textbook functions of the TES paper — several modes of different widths,
// curved ridges, plateaus with a small peak, Int and LogFloat parameters,
// values offset or scaled from 1e-3 to 1e6, heavy-tailed outputs,
// observation noise up to 10% of the range, and regions where evaluations
// fail. They were written for the suite and no acquisition was tuned on
// them.
//
// Every problem states its optimum f* and a maximizer (minimizer for
// minimizing problems) in native units; the tests check both by dense
// search. Names are "user/<name>"; Names lists them, New opens one as an
// sdk.Objective (with sdk.NoiseFree, for the regret, and sdk.Configurable,
// for the run's noise seed).
package usersuite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
)

// Prefix starts every suite problem's name.
const Prefix = "user/"

// ErrFailed is returned by Evaluate in a problem's failing region.
var ErrFailed = errors.New("evaluation failed in this region (by design of the problem)")

// Problem is one objective of the suite.
type Problem struct {
	// Name is the short name ("bumps2"); the objective is Prefix+Name.
	Name string
	// Doc says what kind of objective it is.
	Doc string
	// Params is the search space in native units.
	Params []sdk.Param
	// Minimize is true when smaller values are better.
	Minimize bool
	// F is the noise-free objective in native units.
	F func(x []float64) float64
	// NoiseSD is the standard deviation of the observation noise added by
	// Evaluate (native units; 0: noise-free observations).
	NoiseSD float64
	// Fails reports the region where Evaluate fails (nil: nowhere).
	Fails func(x []float64) bool
	// Best is a maximizer (minimizer when Minimize) in native units, and
	// Opt = F(Best) the optimum f*.
	Best []float64
	Opt  float64
	// Init and Iters are the problem's default budget for `tesbo-host
	// bench --suite user`: initial design size and BO iterations (Budget).
	Init, Iters int
}

// Budget is the default budget of a d-dimensional problem: 2d initial
// points (at least 6) and 25 BO iterations for d ≤ 3, 35 for d ≤ 6, 45
// beyond — enough for the methods to separate, small enough that 10 seeds
// of ~6 acquisitions over the suite run within the hour on 2 cores.
func Budget(d int) (init, iters int) {
	init = max(6, 2*d)
	switch {
	case d <= 3:
		return init, 25
	case d <= 6:
		return init, 35
	}
	return init, 45
}

// Regret is the noise-free regret of x: f* − f(x), or f(x) − f* for a
// minimizing problem (≥ 0 up to rounding).
func (p *Problem) Regret(x []float64) float64 {
	if p.Minimize {
		return p.F(x) - p.Opt
	}
	return p.Opt - p.F(x)
}

// Names returns the suite's objective names (with Prefix), in a fixed
// order.
func Names() []string {
	ps := Problems()
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = Prefix + p.Name
	}
	return out
}

var (
	once     sync.Once
	problems []*Problem
)

// Problems returns the suite's problems (shared; do not modify).
func Problems() []*Problem {
	once.Do(func() {
		problems = build()
		for _, p := range problems {
			p.Init, p.Iters = Budget(len(p.Params))
		}
	})
	return problems
}

// Lookup returns the problem named name (with or without Prefix).
func Lookup(name string) (*Problem, error) {
	short, _ := strings.CutPrefix(name, Prefix)
	for _, p := range Problems() {
		if p.Name == short {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown user-suite problem %q: known ones are %v", name, Names())
}

// All opens every problem as an objective keyed by its name (with Prefix),
// for sdk.ServeObjectives: the synthetic plugin serves them, so `tesbo-host
// run --objective user/bumps2` works too.
func All() map[string]sdk.Objective {
	m := map[string]sdk.Objective{}
	for _, p := range Problems() {
		m[Prefix+p.Name] = &Objective{p: p}
	}
	return m
}

// Objective serves a Problem as an sdk.Objective.
type Objective struct {
	p    *Problem
	mu   sync.Mutex
	seed uint64
}

// New opens the suite problem named name as an objective.
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
	return sdk.Info{Name: Prefix + o.p.Name, Params: slices.Clone(o.p.Params), Minimize: o.p.Minimize, Optimum: &opt}, nil
}

// Keys lists the run parameters Configure accepts.
func (o *Objective) Keys() []string { return []string{"seed", "noise_var"} }

// Configure implements sdk.Configurable: "seed" seeds the observation
// noise. "noise_var", which the host always sends, is ignored: each
// problem's noise is part of its definition.
func (o *Objective) Configure(_ context.Context, params map[string]string) error {
	seed, set, err := testfunc.NoiseSeed(o.p.Name, params)
	if err != nil || !set {
		return err
	}
	o.mu.Lock()
	o.seed = seed
	o.mu.Unlock()
	return nil
}

// Evaluate implements sdk.Objective: F(x) plus NoiseSD times a normal
// deviate that is a deterministic function of (seed, x); ErrFailed in the
// failing region.
func (o *Objective) Evaluate(_ context.Context, x []float64) (float64, error) {
	if err := o.check(x); err != nil {
		return math.NaN(), err
	}
	if o.p.Fails != nil && o.p.Fails(x) {
		return math.NaN(), ErrFailed
	}
	o.mu.Lock()
	seed := o.seed
	o.mu.Unlock()
	v := o.p.F(x)
	if o.p.NoiseSD > 0 {
		v += o.p.NoiseSD * testfunc.Noise(seed, x)
	}
	return v, nil
}

// EvaluateNoiseFree implements sdk.NoiseFree (also in the failing region:
// the regret of a point is defined everywhere).
func (o *Objective) EvaluateNoiseFree(_ context.Context, x []float64) (float64, error) {
	if err := o.check(x); err != nil {
		return math.NaN(), err
	}
	return o.p.F(x), nil
}

func (o *Objective) check(x []float64) error {
	if len(x) != len(o.p.Params) {
		return fmt.Errorf("%s: got %d coordinates, want %d", o.p.Name, len(x), len(o.p.Params))
	}
	return nil
}
