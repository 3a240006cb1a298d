package loader

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// Objective is a handle on one objective served by a plugin process. It
// implements sdk.Objective, sdk.Configurable, sdk.Detailed and
// sdk.NoiseFree; the Supports... methods say which of the optional ones the
// plugin really implements. Safe for concurrent use; a crashed plugin is
// restarted (and re-configured) by the next call.
type Objective struct {
	name   string // public name
	remote string // name inside the plugin
	u      *unit
	p      *proc
	caps   caps

	mu   sync.RWMutex
	info sdk.Info // re-fetched by Configure: parameters may change the space or f*
	// used: the Info was handed out, so a restarted process must
	// describe it alike (proc.sameInfos).
	used atomic.Bool
}

// Name is the objective's name in the registry ("synthetic/branin", "cnn").
func (o *Objective) Name() string { return o.name }

// Source is how the plugin serving the objective runs.
func (o *Objective) Source() Source { return o.u.source }

// Info returns the objective's validated Info: as fetched when the plugin
// was first described, or after the last Configure, since run parameters
// may change the space or f* (synthetic/ackley's dim, a BBOB instance).
func (o *Objective) Info(context.Context) (sdk.Info, error) { return o.currentInfo(), nil }

// Space is the objective's validated search space.
func (o *Objective) Space() sdk.Space { return sdk.Space(o.currentInfo().Params) }

func (o *Objective) currentInfo() sdk.Info {
	o.used.Store(true)
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.info
}

// SupportsConfigure, SupportsDetail and SupportsNoiseFree report the
// optional interfaces the plugin's objective implements (the first and
// last are host.ConfigureSupporter and host.NoiseFreeSupporter).
func (o *Objective) SupportsConfigure() bool { return o.caps.configurable }
func (o *Objective) SupportsDetail() bool    { return o.caps.detailed }
func (o *Objective) SupportsNoiseFree() bool { return o.caps.noiseFree }

// SupportsReports reports whether the plugin says its objective reports
// intermediate values (host.ReportsSupporter): a pruner stops nothing of
// one that does not.
func (o *Objective) SupportsReports() bool { return o.caps.reports }

// Configure passes run parameters (sdk.Configurable). It is a no-op for an
// objective that does not implement Configurable. The parameters are
// re-sent automatically to a restarted plugin process.
func (o *Objective) Configure(ctx context.Context, params map[string]string) error {
	if !o.caps.configurable {
		return nil
	}
	params = maps.Clone(params)
	err := o.p.call(ctx, "configure", o.u.r.opts.setupTimeout(), func(ctx context.Context, s *session) error {
		_, err := pb.NewObjectiveClient(s.rpc()).Configure(ctx, &pb.ConfigureRequest{Objective: o.remote, Params: params})
		return err
	})
	if err != nil {
		return o.named(err)
	}
	o.p.mu.Lock()
	if o.p.configs == nil {
		o.p.configs = map[string]map[string]string{}
	}
	o.p.configs[o.remote] = params
	o.p.mu.Unlock()
	info, _, err := o.p.info(ctx, o.name, o.remote)
	if err != nil {
		return fmt.Errorf("after configure: %w", err)
	}
	o.mu.Lock()
	o.info = info
	o.mu.Unlock()
	return nil
}

// EvalLimits reports how the loader bounds one evaluation: call is the
// limit on the call itself (Options.EvalTimeout, or the script limit for a
// script; 0: none), counted from when the plugin process is ready, and
// startup the most that getting a process ready — starting it, its
// handshake and replaying its Configure calls — may take before that
// (Options.StartTimeout + Options.SetupTimeout). The host uses it
// (host.EvalLimiter) so that the restart of a process does not count
// against an evaluation's limit.
func (o *Objective) EvalLimits() (call, startup time.Duration) {
	return o.u.evalTimeout(), o.u.r.opts.startTimeout() + o.u.r.opts.setupTimeout()
}

// Evaluate returns f(x) for x in native units.
func (o *Objective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	r, err := o.evaluate(ctx, "evaluate", x, pb.EvaluateMode_EVALUATE_MODE_VALUE)
	return r.Value, err
}

// EvaluateDetail returns f(x) with the plugin's metadata (plain Evaluate
// with no metadata when the plugin does not implement sdk.Detailed).
func (o *Objective) EvaluateDetail(ctx context.Context, x []float64) (sdk.Result, error) {
	mode := pb.EvaluateMode_EVALUATE_MODE_VALUE
	if o.caps.detailed {
		mode = pb.EvaluateMode_EVALUATE_MODE_DETAIL
	}
	return o.evaluate(ctx, "evaluate", x, mode)
}

// EvaluateNoiseFree returns the noise-free f(x); it fails with
// ErrWrongKind when the plugin does not implement sdk.NoiseFree.
func (o *Objective) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	if !o.caps.noiseFree {
		return 0, &Error{Plugin: o.name, Op: "evaluate noise-free", Cause: ErrWrongKind, Err: fmt.Errorf("the objective does not implement sdk.NoiseFree")}
	}
	r, err := o.evaluate(ctx, "evaluate noise-free", x, pb.EvaluateMode_EVALUATE_MODE_NOISE_FREE)
	return r.Value, err
}

func (o *Objective) evaluate(ctx context.Context, op string, x []float64, mode pb.EvaluateMode) (sdk.Result, error) {
	if err := checkPoint(o.currentInfo(), x); err != nil {
		return sdk.Result{}, &Error{Plugin: o.name, Op: op, Cause: ErrBadInput, Err: err}
	}
	var resp *pb.EvaluateResponse
	req := &pb.EvaluateRequest{Objective: o.remote, X: x, Mode: mode}
	rep, reporting := sdk.ReporterFrom(ctx)
	err := o.p.call(ctx, op, o.u.evalTimeout(), func(ctx context.Context, s *session) error {
		var err error
		if reporting && o.caps.reports && mode != pb.EvaluateMode_EVALUATE_MODE_NOISE_FREE {
			resp, err = reportEvaluate(ctx, pb.NewObjectiveClient(s.rpc()), req, rep)
		} else {
			resp, err = pb.NewObjectiveClient(s.rpc()).Evaluate(ctx, req)
		}
		return err
	})
	if err != nil {
		return sdk.Result{}, o.named(err)
	}
	if m := len(o.currentInfo().Outputs); m > 0 && mode != pb.EvaluateMode_EVALUATE_MODE_NOISE_FREE {
		outs := resp.GetOutputs()
		if err := o.currentInfo().CheckOutputs(outs); err != nil {
			cause := ErrBadValue
			if errors.Is(err, sdk.ErrOutputCount) {
				cause = ErrBadOutput
			}
			return sdk.Result{}, &Error{Plugin: o.name, Op: op, Cause: cause, Err: fmt.Errorf("f(%v): %w", x, err)}
		}
		return sdk.Result{Value: resp.GetValue(), Outputs: outs, Meta: resp.GetMeta()}, nil
	}
	v := resp.GetValue()
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return sdk.Result{}, &Error{Plugin: o.name, Op: op, Cause: ErrBadValue, Err: fmt.Errorf("f(%v) = %v", x, v)}
	}
	return sdk.Result{Value: v, Meta: resp.GetMeta()}, nil
}

// named puts the objective's public name on errors from a multi-objective
// plugin process.
func (o *Objective) named(err error) error {
	if le, ok := err.(*Error); ok && le.Plugin != o.name {
		c := *le
		c.Plugin = o.name
		return &c
	}
	return err
}

// checkPoint rejects a point of the wrong dimension or with non-finite
// coordinates before it reaches the plugin.
func checkPoint(info sdk.Info, x []float64) error {
	if len(x) != len(info.Params) {
		return fmt.Errorf("x has %d coordinates, the objective has %d parameters", len(x), len(info.Params))
	}
	act := sdk.Space(info.Params).Active(x)
	for i, v := range x {
		switch {
		case act[i] && (math.IsNaN(v) || math.IsInf(v, 0)):
			return fmt.Errorf("x[%d] (%s) is %v", i, info.Params[i].Name, v)
		case !act[i] && !math.IsNaN(v):
			// An inactive parameter (sdk.Condition) never reaches the
			// objective: the host sends NaN.
			return fmt.Errorf("x[%d] (%s) is %v but inactive (want NaN)", i, info.Params[i].Name, v)
		}
	}
	return nil
}

var (
	_ sdk.Objective    = (*Objective)(nil)
	_ sdk.Configurable = (*Objective)(nil)
	_ sdk.Detailed     = (*Objective)(nil)
	_ sdk.NoiseFree    = (*Objective)(nil)
)
