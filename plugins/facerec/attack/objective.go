package attack

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"sync"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/frs"
	"github.com/tesbo/tesbo/plugins/facerec/synth"
	"github.com/tesbo/tesbo/sdk"
)

// Name is the objective's name in tesbo.
const Name = "facerec"

// Objective serves the attack to tesbo's host. It implements sdk.Objective
// (value: the distance d to the nearest gallery face, minimized),
// sdk.Configurable (the --param keys of paramHelp) and sdk.Detailed
// (metadata: matched identity, distance, success d < θ, ...). The attack is
// set up by Configure, or with defaults by the first evaluation.
type Objective struct {
	log zerolog.Logger
	// NewFRS, if set, supplies the FRS instead of starting sidecars (tests).
	NewFRS func() frs.FRS

	mu     sync.Mutex
	cfg    Config
	attack *Attack
}

// NewObjective returns an unconfigured objective logging to log.
func NewObjective(log zerolog.Logger) *Objective { return &Objective{log: log} }

// Info declares the eight edit parameters (synth.Names, each in [0, 1])
// and that the distance is minimized. The distance cannot go below 0, which
// Info declares as the optimum so that the host's immediate regret is the
// distance d itself (the quantity of the paper's Fig. 7b); the attack
// succeeds long before, at d < θ.
func (o *Objective) Info(context.Context) (sdk.Info, error) {
	params := make([]sdk.Param, len(synth.Names))
	for i, n := range synth.Names {
		params[i] = sdk.Param{Name: n, Kind: sdk.Float, Low: 0, High: 1}
	}
	zero := 0.0
	return sdk.Info{Name: Name, Params: params, Minimize: true, Optimum: &zero}, nil
}

// Configure parses the run's parameters and sets the attack up (starting
// the FRS sidecars and computing the gallery's descriptors). Calling it
// again with the same parameters keeps the running attack.
func (o *Objective) Configure(ctx context.Context, params map[string]string) error {
	cfg, err := ParseParams(params)
	if err != nil {
		return err
	}
	if v, ok := params["noise_var"]; ok {
		if nv, err := strconv.ParseFloat(v, 64); err == nil && nv > 0 {
			// The host always sends its noise variance (default 1e-4), so a
			// warning here would fire on every run; the README says it.
			o.log.Debug().Float64("noise_var", nv).Msg("facerec is deterministic; --noise-var is ignored")
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.attack != nil && reflect.DeepEqual(cfg, o.cfg) {
		return nil
	}
	if o.attack != nil {
		o.attack.Close()
		o.attack = nil
	}
	o.cfg = cfg
	_, err = o.setupLocked(ctx)
	return err
}

func (o *Objective) setupLocked(ctx context.Context) (*Attack, error) {
	if o.attack != nil {
		return o.attack, nil
	}
	var f frs.FRS
	if o.NewFRS != nil {
		f = o.NewFRS()
	}
	a, err := newAttack(ctx, o.cfg, f, o.log)
	if err != nil {
		return nil, err
	}
	o.attack = a
	return a, nil
}

// loadAttack returns the attack, setting it up with the current configuration
// if needed.
func (o *Objective) loadAttack(ctx context.Context) (*Attack, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.setupLocked(ctx)
}

// Evaluate returns the distance of the edited face to its nearest gallery
// face.
func (o *Objective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	r, err := o.EvaluateDetail(ctx, x)
	return r.Value, err
}

// EvaluateDetail returns the distance with metadata: identity and distance
// (the evaluated ones; distance is the objective value), below_threshold
// (distance < θ), verified ("true" when the image went through full face
// detection) with verified_identity and verified_distance, success
// (verified_distance < θ: the only success criterion; "false" when not
// re-checked), threshold, glasses style, eval number, shift (distance
// between the edited and the unedited attacker's descriptors) and, when
// saved, image.
func (o *Objective) EvaluateDetail(ctx context.Context, x []float64) (sdk.Result, error) {
	a, err := o.loadAttack(ctx)
	if err != nil {
		return sdk.Result{}, err
	}
	out, err := a.evaluate(ctx, x)
	if err != nil {
		return sdk.Result{}, err
	}
	meta := map[string]string{
		"identity":        out.Identity,
		"distance":        fmtFloat(out.Distance),
		"below_threshold": strconv.FormatBool(out.BelowThreshold),
		"verified":        strconv.FormatBool(out.Verified != nil),
		"success":         strconv.FormatBool(out.Success),
		"threshold":       fmtFloat(a.cfg.Threshold),
		"glasses":         out.Params.Glasses().String(),
		"eval":            strconv.Itoa(out.Eval),
		"shift":           fmtFloat(out.Shift),
	}
	if out.Verified != nil {
		meta["verified_identity"] = out.Verified.Identity
		meta["verified_distance"] = fmtFloat(out.Verified.Distance)
	}
	if out.Saved != "" {
		meta["image"] = out.Saved
	}
	return sdk.Result{Value: out.Distance, Meta: meta}, nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// Close saves the best result's figure and stops the sidecars.
func (o *Objective) Close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.attack == nil {
		return nil
	}
	a := o.attack
	o.attack = nil
	if b := a.currentBest(); b != nil {
		b.logFields(o.log.Info().Str("figure", a.bestFigurePath())).Msg("facerec: best result")
	}
	if err := a.Close(); err != nil {
		return fmt.Errorf("facerec: close: %w", err)
	}
	return nil
}

var (
	_ sdk.Objective    = (*Objective)(nil)
	_ sdk.Configurable = (*Objective)(nil)
	_ sdk.Detailed     = (*Objective)(nil)
)
