package synthetic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
)

// KeyObjectives is DTLZ2's number of objectives (default 2).
const KeyObjectives = "objectives"

// multiNoiseVar is the default observation noise variance of every output
// of a several-output problem, the single-output functions' 1e-4.
const multiNoiseVar = 1e-4

// MultiObjective serves one of testfunc's several-output problems
// (testfunc.NewMulti) as an objective with sdk.Info.Outputs: BoTorch's
// objectives as Minimize outputs f1 … fm (or f), its constraint slacks as
// Constraint outputs c1 … cn feasible at ≥ 0, and its reference point
// (native units) as Info.RefPoint. Each output is observed with its own
// deterministic noise (testfunc.Noise with a per-output seed), so repeated
// runs reproduce exactly. Safe for concurrent use.
type MultiObjective struct {
	name string

	mu       sync.RWMutex
	p        *testfunc.Multi
	noiseVar float64
	seed     uint64
}

var (
	_ sdk.Objective    = (*MultiObjective)(nil)
	_ sdk.MultiOutput  = (*MultiObjective)(nil)
	_ sdk.Configurable = (*MultiObjective)(nil)
)

// NewMulti serves the several-output problem of that registry name
// (testfunc.MultiNames) with its default settings until Configure says
// otherwise.
func NewMulti(name string) (*MultiObjective, error) {
	p, err := testfunc.NewMulti(name, testfunc.MultiSettings{})
	if err != nil {
		return nil, err
	}
	return &MultiObjective{name: name, p: p, noiseVar: multiNoiseVar}, nil
}

// Problem returns the problem as currently configured (its maximum
// hypervolume or constrained optimum, for benchmarks).
func (o *MultiObjective) Problem() *testfunc.Multi {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.p
}

// Keys returns the parameter keys Configure accepts.
func (o *MultiObjective) Keys() []string {
	keys := []string{keyNoiseVar, keySeed}
	switch o.name {
	case "dtlz2":
		keys = append(keys, KeyDim, KeyObjectives)
	case "zdt1", "zdt2", "zdt3", "constrainedhartmann", "constrainedhartmannsmooth":
		keys = append(keys, KeyDim)
	}
	sort.Strings(keys)
	return keys
}

// Configure applies noise_var, seed, dim and objectives; unknown keys are
// errors and absent keys take their defaults.
func (o *MultiObjective) Configure(ctx context.Context, params map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	label := Prefix + o.name
	for k := range params {
		if !contains(o.Keys(), k) {
			return fmt.Errorf("%s: unknown parameter %q; this objective accepts %s", label, k, strings.Join(o.Keys(), ", "))
		}
	}
	nv := multiNoiseVar
	if s := strings.TrimSpace(params[keyNoiseVar]); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: %s=%q, want a finite number ≥ 0", label, keyNoiseVar, s)
		}
		nv = v
	}
	seed, err := parseSeed(label, keySeed, params[keySeed])
	if err != nil {
		return err
	}
	var s testfunc.MultiSettings
	for key, dst := range map[string]*int{KeyDim: &s.Dim, KeyObjectives: &s.Objectives} {
		if v := strings.TrimSpace(params[key]); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("%s: %s=%q, want a positive integer", label, key, v)
			}
			*dst = n
		}
	}
	p, err := testfunc.NewMulti(o.name, s)
	if err != nil {
		return fmt.Errorf("configure %s: %w", label, err)
	}
	o.mu.Lock()
	o.p, o.noiseVar, o.seed = p, nv, seed
	o.mu.Unlock()
	return nil
}

// Info declares the problem's parameters (native bounds), outputs and
// reference point; the initial design is 2(d + 1) points, as in BoTorch's
// multi-objective tutorials.
func (o *MultiObjective) Info(ctx context.Context) (sdk.Info, error) {
	if err := ctx.Err(); err != nil {
		return sdk.Info{}, err
	}
	p := o.Problem()
	info := sdk.Info{Name: Prefix + o.name, Params: params(p.Lower, p.Upper), InitialDesign: 2 * (p.Dim + 1),
		RefPoint: append([]float64(nil), p.RefPoint...)}
	for _, out := range p.Outputs {
		if out.Constraint {
			info.Outputs = append(info.Outputs, sdk.Output{Name: out.Name, Goal: sdk.Constraint, Feasible: sdk.AtLeast, Bound: sdk.Bound(0)})
		} else {
			info.Outputs = append(info.Outputs, sdk.Output{Name: out.Name, Goal: sdk.Minimize})
		}
	}
	return info, nil
}

// EvaluateOutputs returns every output observed with noise: y_k = f_k(x) +
// √σ_n² z_k.
func (o *MultiObjective) EvaluateOutputs(ctx context.Context, x []float64) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o.mu.RLock()
	p, nv, seed := o.p, o.noiseVar, o.seed
	o.mu.RUnlock()
	y, err := p.Eval(x)
	if err != nil {
		return nil, err
	}
	for k := range y {
		y[k] += math.Sqrt(nv) * testfunc.Noise(seed+uint64(k)*0x9e3779b97f4a7c15, x)
	}
	return y, nil
}

// Evaluate is never called by the host for an objective with outputs.
func (o *MultiObjective) Evaluate(context.Context, []float64) (float64, error) {
	return math.NaN(), errors.New(Prefix + o.name + " has several outputs: the host calls EvaluateOutputs")
}
