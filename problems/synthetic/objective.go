// Package synthetic adapts the benchmark functions of package testfunc to
// the plugin SDK: an Objective implements sdk.Objective, sdk.Configurable and
// sdk.NoiseFree, adding deterministic observation noise to f(x).
//
// It is a package of its own (rather than part of testfunc) so that testfunc
// stays a plain numerical library depending only on gonum: embedders and the
// gp/acq/tes tests import testfunc without linking go-plugin and gRPC.
// The synthetic plugin (plugins/synthetic) serves All(); tesbo-host bench
// opens them in process.
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

// Prefix is prepended to testfunc's names to form the objective names
// ("synthetic/branin").
const Prefix = "synthetic/"

// Parameter keys Configure understands.
const (
	// keyNoiseVar is the observation noise variance σ_n² (reserved: the host
	// always sends the run's --noise-var, default 1e-4, so the paper's
	// log10P setting needs --noise-var 2.511e-2). Absent or empty means the
	// function's default: 1e-4 (the paper's), or the data set's 2.511e-2
	// for log10p.
	keyNoiseVar = "noise_var"
	// keySeed seeds the observation noise (reserved: the host sends the
	// study seed). Absent or empty means 0.
	keySeed = "seed"
	// KeyDim is the dimension of the any-dimension functions (ackley, levy,
	// rosenbrock, michalewicz, styblinskitang, griewank, rastrigin,
	// dixonprice, powell and bbob-f1 … bbob-f24; default
	// testfunc.defaultDim = 2, 4 for powell).
	KeyDim = "dim"
	// KeyInstance is the instance of a BBOB function bbob-f1 … bbob-f24
	// (default 1): its random optimum, rotations and f-offset.
	KeyInstance = "instance"
	// keySampleSeed selects gpsample's draw (default 0). It is not "seed":
	// the study seed varies between a benchmark's runs, while the paper's
	// runs all optimize one fixed draw.
	keySampleSeed = "sample_seed"
	// keyData is log10p's data directory (required), the directory holding
	// X_log10P.txt, Y_log10P.txt and hyperparameters_log10P.txt.
	keyData = "data"
)

// Objective serves one benchmark function. Evaluate returns a noisy
// observation y = f(x) + √σ_n² z with z ~ N(0,1) fixed by (seed, the bits of
// x) (testfunc.Noise), so repeated runs reproduce exactly; EvaluateNoiseFree
// returns f(x). It is safe for concurrent use; Configure replaces the whole
// configuration atomically.
type Objective struct {
	name  string             // testfunc registry name, or "" for a fixed function
	fixed *testfunc.Function // the function of fromFunction

	mu         sync.RWMutex
	configured bool
	fn         *testfunc.Function // nil until built (log10p needs its data)
	noiseVar   float64            // < 0 means fn.NoiseVar
	seed       uint64
}

var (
	_ sdk.Objective    = (*Objective)(nil)
	_ sdk.Configurable = (*Objective)(nil)
	_ sdk.NoiseFree    = (*Objective)(nil)
)

// fromFunction serves fn itself with the given noise variance (negative
// means fn.NoiseVar) and noise seed. Configure accepts only noise_var and
// seed for it.
func fromFunction(fn *testfunc.Function, noiseVar float64, seed uint64) *Objective {
	return &Objective{fixed: fn, fn: fn, noiseVar: noiseVar, seed: seed, configured: true}
}

// New serves the testfunc function of that registry name (testfunc.Names)
// with default settings until Configure says otherwise. The function is
// built on first use, so a plugin serving every name starts instantly.
func New(name string) (*Objective, error) {
	if !contains(testfunc.Names(), name) {
		return nil, fmt.Errorf("unknown synthetic objective %q; known: %s", name, strings.Join(testfunc.Names(), ", "))
	}
	return &Objective{name: name, noiseVar: -1}, nil
}

// All returns an Objective for every testfunc function and every
// several-output problem (MultiObjective), keyed by Prefix+name, ready for
// sdk.ServeObjectives.
func All() map[string]sdk.Objective {
	m := make(map[string]sdk.Objective)
	for _, n := range testfunc.Names() {
		o, _ := New(n) // the names come from the registry
		m[Prefix+n] = o
	}
	for _, n := range testfunc.MultiNames() {
		o, _ := NewMulti(n) // the names come from the registry
		m[Prefix+n] = o
	}
	return m
}

// Keys returns the parameter keys Configure accepts for this objective.
func (o *Objective) Keys() []string {
	keys := []string{keyNoiseVar, keySeed}
	switch {
	case o.name == "gpsample":
		keys = append(keys, keySampleSeed)
	case o.name == "log10p":
		keys = append(keys, keyData)
	case testfunc.HasInstances(o.name):
		keys = append(keys, KeyDim, KeyInstance)
	case testfunc.AnyDim(o.name):
		keys = append(keys, KeyDim)
	}
	sort.Strings(keys)
	return keys
}

// Configure applies a run's parameters (see the Key constants); keys it
// does not know are errors, so a misspelt --param is reported rather than
// ignored. Absent keys take their defaults, not earlier values.
func (o *Objective) Configure(ctx context.Context, params map[string]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	allowed := o.Keys()
	for k := range params {
		if !contains(allowed, k) {
			return fmt.Errorf("%s: unknown parameter %q; this objective accepts %s", o.label(), k, strings.Join(allowed, ", "))
		}
	}
	noiseVar := -1.0
	if s := strings.TrimSpace(params[keyNoiseVar]); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s: %s=%q, want a finite number ≥ 0", o.label(), keyNoiseVar, s)
		}
		noiseVar = v
	}
	seed, err := parseSeed(o.label(), keySeed, params[keySeed])
	if err != nil {
		return err
	}
	fn := o.fixed
	if fn == nil {
		var s testfunc.Settings
		if v := strings.TrimSpace(params[KeyDim]); v != "" {
			d, err := strconv.Atoi(v)
			if err != nil || d < 1 {
				return fmt.Errorf("%s: %s=%q, want a positive integer", o.label(), KeyDim, v)
			}
			s.Dim = d
		}
		if v := strings.TrimSpace(params[KeyInstance]); v != "" {
			i, err := strconv.Atoi(v)
			if err != nil || i < 1 {
				return fmt.Errorf("%s: %s=%q, want a positive integer", o.label(), KeyInstance, v)
			}
			s.Instance = i
		}
		if s.SampleSeed, err = parseSeed(o.label(), keySampleSeed, params[keySampleSeed]); err != nil {
			return err
		}
		s.DataDir = strings.TrimSpace(params[keyData])
		if fn, err = testfunc.New(o.name, s); err != nil {
			return fmt.Errorf("configure %s: %w", o.label(), err)
		}
	}
	o.mu.Lock()
	o.fn, o.noiseVar, o.seed, o.configured = fn, noiseVar, seed, true
	o.mu.Unlock()
	return nil
}

// parseSeed reads a seed as an unsigned or (two's-complement) signed 64-bit
// integer; empty means 0.
func parseSeed(label, key, s string) (uint64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return uint64(i), nil
	}
	return 0, fmt.Errorf("%s: %s=%q, want an integer", label, key, s)
}

// current returns the function and noise settings, building the default
// function on first use when Configure has not run.
func (o *Objective) current() (*testfunc.Function, float64, uint64, error) {
	o.mu.RLock()
	fn, nv, seed, configured := o.fn, o.noiseVar, o.seed, o.configured
	o.mu.RUnlock()
	if fn == nil && !configured {
		o.mu.Lock()
		if o.fn == nil && !o.configured {
			if o.name == "log10p" {
				o.mu.Unlock()
				return nil, 0, 0, errors.New(Prefix + "log10p: no data directory configured: pass --param " + keyData +
					"=DIR (the directory with X_log10P.txt, Y_log10P.txt, hyperparameters_log10P.txt)")
			}
			built, err := testfunc.New(o.name, testfunc.Settings{})
			if err != nil {
				o.mu.Unlock()
				return nil, 0, 0, fmt.Errorf("build %s: %w", o.label(), err)
			}
			o.fn = built
		}
		fn, nv, seed = o.fn, o.noiseVar, o.seed
		o.mu.Unlock()
	}
	if nv < 0 {
		nv = fn.NoiseVar
	}
	return fn, nv, seed, nil
}

func (o *Objective) label() string {
	if o.fixed != nil {
		return o.fixed.Name
	}
	return Prefix + o.name
}

// InitialDesign is the initial design every benchmark function asks for
// (sdk.Info.InitialDesign): the 2 points of the TES paper's §5 ("initialized
// with 2 data samples"), which the paper reproductions in docs/results use.
const InitialDesign = 2

// Info describes the configured function: one Float parameter x1…xd per
// coordinate with the function's native bounds, Minimize false (everything
// maximizes), Optimum f* and InitialDesign. Before Configure it describes the default
// settings; log10p, which has no default data, reports its two coordinates
// on [0,1] and no optimum until its data directory is configured.
func (o *Objective) Info(ctx context.Context) (sdk.Info, error) {
	if err := ctx.Err(); err != nil {
		return sdk.Info{}, err
	}
	fn, _, _, err := o.current()
	if err != nil {
		if o.name == "log10p" {
			return sdk.Info{Name: o.label(), Params: params([]float64{0, 0}, []float64{1, 1}), InitialDesign: InitialDesign}, nil
		}
		return sdk.Info{}, err
	}
	opt := fn.Optimum
	return sdk.Info{Name: o.label(), Params: params(fn.Lower, fn.Upper), Optimum: &opt, InitialDesign: InitialDesign}, nil
}

func params(lo, hi []float64) []sdk.Param {
	ps := make([]sdk.Param, len(lo))
	for j := range ps {
		ps[j] = sdk.Param{Name: fmt.Sprintf("x%d", j+1), Kind: sdk.Float, Low: lo[j], High: hi[j]}
	}
	return ps
}

// Evaluate returns the noisy observation f(x) + √σ_n² z (native units).
func (o *Objective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if err := ctx.Err(); err != nil {
		return math.NaN(), err
	}
	fn, nv, seed, err := o.current()
	if err != nil {
		return math.NaN(), err
	}
	return fn.Observe(x, nv, seed)
}

// EvaluateNoiseFree returns f(x), for the immediate regret.
func (o *Objective) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	if err := ctx.Err(); err != nil {
		return math.NaN(), err
	}
	fn, _, _, err := o.current()
	if err != nil {
		return math.NaN(), err
	}
	return fn.Eval(x)
}

// currentNoiseVar returns the observation noise variance currently in effect.
func (o *Objective) currentNoiseVar() (float64, error) {
	_, nv, _, err := o.current()
	return nv, err
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
