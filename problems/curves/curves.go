// Package curves is a synthetic learning-curve suite for early stopping
// (pruners, tesbo-host run --pruner): each problem is a training run of
// Steps epochs whose validation accuracy after epoch k is acc(x, k), a
// parametric learning curve whose shape depends on the hyper-parameters x.
// The objective is the accuracy after the last epoch (maximized); its
// evaluation reports the accuracy after every epoch through sdk.Report and
// stops, returning its last accuracy, when the host says so. The cost of
// an evaluation is the number of epochs it ran.
//
// The curves come in three kinds, on two quality landscapes q(x) ∈ [0, 1]
// (from Branin in 2-d and Hartmann-3 in 3-d, package testfunc):
//
//   - saturate: acc = 0.9·q·(1 − e^(−k/τ)), τ a few epochs: curves rise and
//     level off in the order of their final values (what pruners assume);
//   - cross: the same with τ growing with q, so the best configurations
//     learn slowest and overtake the others late (curves cross);
//   - overfit: acc rises, then falls after epoch 8 at a rate set by a
//     parameter unrelated to q, so early accuracy overrates some of them.
//
// Reported values carry noise of standard deviation 0.005, a fixed
// function of (seed, x, k) like a fixed validation set's, so an evaluation
// is reproducible and the reports of one point agree whatever stopped it.
// Each problem's optimum f* = max_x acc(x, Steps) is found numerically
// once (grid and Nelder–Mead); the tests check it.
package curves

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
)

// Prefix starts every problem's name.
const Prefix = "curve/"

// Steps is the number of epochs of a full training run (every problem's
// sdk.Info.MaxStep): 27 = 3³, so ASHA and Hyperband with η = 3 get rungs at
// 1, 3, 9 and 27.
const Steps = 27

// noiseSD is the standard deviation of the reported accuracies' noise.
const noiseSD = 0.005

// Problem is one learning-curve problem.
type Problem struct {
	Name string // short name; the objective is Prefix+Name
	Doc  string
	Dim  int // parameters x0 … x(Dim−1), each in [0, 1]
	// Acc is the noise-free accuracy after epoch k (1 ≤ k ≤ Steps).
	Acc func(x []float64, k int) float64

	once sync.Once
	opt  float64
	best []float64
}

// Optimum returns f* = max_x Acc(x, Steps) and a maximizer.
func (p *Problem) Optimum() (float64, []float64) {
	p.once.Do(func() { p.opt, p.best = maximize(p.Dim, func(x []float64) float64 { return p.Acc(x, Steps) }) })
	return p.opt, p.best
}

// Regret is the noise-free regret f* − Acc(x, Steps) of a final point.
func (p *Problem) Regret(x []float64) float64 {
	opt, _ := p.Optimum()
	return opt - p.Acc(x, Steps)
}

// qBranin is Branin's quality landscape: 1 at its three maximizers,
// e^(−Δ/10) at a gap Δ below f*.
func qBranin(x []float64) float64 {
	f, _ := branin.Eval(x)
	return math.Exp(-(branin.Optimum - f) / 10)
}

// qHartmann3 is Hartmann-3 scaled to [0, 1].
func qHartmann3(x []float64) float64 {
	f, _ := hartmann3.Eval(x)
	return f / hartmann3.Optimum
}

var (
	branin    = testfunc.Branin()
	hartmann3 = testfunc.Hartmann3()
)

// saturating is 0.9·q·(1 − e^(−k/τ)).
func saturating(q, tau float64, k int) float64 {
	return 0.9 * q * (1 - math.Exp(-float64(k)/tau))
}

// overfitting is a saturating curve that loses ω/Steps per epoch after
// epoch 8.
func overfitting(q, tau, omega float64, k int) float64 {
	return saturating(q, tau, k) - omega*float64(max(0, k-8))/Steps
}

// Problems returns the suite (shared; do not modify).
func Problems() []*Problem { return suite }

var suite = []*Problem{
	{Name: "saturate2", Dim: 2, Doc: "Branin quality, τ = 2 + 4·x1: curves level off in order",
		Acc: func(x []float64, k int) float64 { return saturating(qBranin(x), 2+4*x[1], k) }},
	{Name: "saturate3", Dim: 3, Doc: "Hartmann-3 quality, τ = 2 + 6·x2: curves level off in order",
		Acc: func(x []float64, k int) float64 { return saturating(qHartmann3(x), 2+6*x[2], k) }},
	{Name: "cross2", Dim: 2, Doc: "Branin quality, τ = 1 + 20·q²: the best learn slowest and overtake late",
		Acc: func(x []float64, k int) float64 { q := qBranin(x); return saturating(q, 1+20*q*q, k) }},
	{Name: "cross3", Dim: 3, Doc: "Hartmann-3 quality, τ = 1 + 20·q²: the best learn slowest and overtake late",
		Acc: func(x []float64, k int) float64 { q := qHartmann3(x); return saturating(q, 1+20*q*q, k) }},
	{Name: "overfit2", Dim: 2, Doc: "Branin quality, τ = 3; after epoch 8 accuracy falls at a rate 0.4·x0",
		Acc: func(x []float64, k int) float64 { return overfitting(qBranin(x), 3, 0.4*x[0], k) }},
	{Name: "overfit3", Dim: 3, Doc: "Hartmann-3 quality, τ = 3; after epoch 8 accuracy falls at a rate 0.5·(1 − x1)",
		Acc: func(x []float64, k int) float64 { return overfitting(qHartmann3(x), 3, 0.5*(1-x[1]), k) }},
}

// Names returns the suite's objective names (with Prefix), in order.
func Names() []string {
	out := make([]string, len(suite))
	for i, p := range suite {
		out[i] = Prefix + p.Name
	}
	return out
}

// lookup returns the problem named name (with or without Prefix).
func lookup(name string) (*Problem, error) {
	short, _ := strings.CutPrefix(name, Prefix)
	for _, p := range suite {
		if p.Name == short {
			return p, nil
		}
	}
	return nil, fmt.Errorf("unknown learning-curve problem %q: known ones are %v", name, Names())
}

// All opens every problem as an objective keyed by its name (with Prefix),
// for the synthetic plugin.
func All() map[string]sdk.Objective {
	m := map[string]sdk.Objective{}
	for _, p := range suite {
		m[Prefix+p.Name] = &Objective{p: p}
	}
	return m
}

// Objective serves a Problem: sdk.Objective reporting every epoch,
// sdk.NoiseFree (the final accuracy without noise, for the regret) and
// sdk.Configurable (the noise seed).
type Objective struct {
	p    *Problem
	mu   sync.Mutex
	seed uint64
}

// New opens the problem named name as an objective.
func New(name string) (*Objective, error) {
	p, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return &Objective{p: p}, nil
}

// Info implements sdk.Objective.
func (o *Objective) Info(context.Context) (sdk.Info, error) {
	params := make([]sdk.Param, o.p.Dim)
	for i := range params {
		params[i] = sdk.Param{Name: "x" + strconv.Itoa(i), Kind: sdk.Float, Low: 0, High: 1}
	}
	opt, _ := o.p.Optimum()
	return sdk.Info{Name: Prefix + o.p.Name, Params: params, Optimum: &opt, MaxStep: Steps, InitialDesign: 2 * o.p.Dim}, nil
}

// Keys lists the run parameters Configure accepts.
func (o *Objective) Keys() []string { return []string{"seed", "noise_var"} }

// Configure implements sdk.Configurable: "seed" seeds the noise;
// "noise_var", which the host always sends, is ignored (the noise is the
// suite's).
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

// Evaluate trains for Steps epochs, reporting each epoch's accuracy, and
// returns the last one reached (at Steps, or where the host said stop).
func (o *Objective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if err := checkX(x, o.p.Dim); err != nil {
		return 0, err
	}
	o.mu.Lock()
	seed := o.seed
	o.mu.Unlock()
	var acc float64
	for k := 1; k <= Steps; k++ {
		acc = o.p.Acc(x, k) + noiseSD*gauss(seed, x, k)
		prune, err := sdk.Report(ctx, k, acc)
		if err != nil || prune {
			return acc, err
		}
		if err := ctx.Err(); err != nil {
			return 0, err
		}
	}
	return acc, nil
}

// EvaluateNoiseFree implements sdk.NoiseFree: Acc(x, Steps).
func (o *Objective) EvaluateNoiseFree(_ context.Context, x []float64) (float64, error) {
	if err := checkX(x, o.p.Dim); err != nil {
		return 0, err
	}
	return o.p.Acc(x, Steps), nil
}

func checkX(x []float64, d int) error {
	if len(x) != d {
		return fmt.Errorf("x has %d coordinates, want %d", len(x), d)
	}
	for i, v := range x {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("x%d = %v outside [0, 1]", i, v)
		}
	}
	return nil
}
