package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/pause"
	"github.com/tesbo/tesbo/sdk"
)

// graceContext returns a context for evaluations that is cancelled grace
// after ctx is (immediately for grace < 0), and a stop function.
func graceContext(ctx context.Context, grace time.Duration) (context.Context, func()) {
	ectx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			if grace > 0 {
				t := time.NewTimer(grace)
				select {
				case <-t.C:
				case <-done:
				}
				t.Stop()
			}
			cancel(context.Cause(ctx))
		case <-done:
		}
	}()
	return ectx, func() { close(done); cancel(context.Canceled) }
}

// pool is the evaluation pool the engine's slots (engine.go) run trials
// in: each attempt under the evaluation limit, with a panic, an error or a
// NaN/Inf value contained as a failed attempt. A single process retries a
// failed attempt in place with exponential backoff (evalTrial, recording
// through the study); a worker makes one attempt per lease (call) and the
// stored queue retries.
type pool struct {
	timeout time.Duration // per attempt (Options.EvalTimeout; 0: none)
	retries int
	backoff time.Duration
	info    sdk.Info // the objective's: its declared outputs (none: one value)
	log     zerolog.Logger
}

// recorder stores the progress of evaluations.
type recorder interface {
	// start marks trial id running its attempt-th attempt.
	start(ctx context.Context, id, attempt int, at time.Time) error
	// finish records the trial's outcome.
	finish(ctx context.Context, id int, r sdk.Result, evalErr error, st evalStats) error
	// newCurve returns the sdk.Reporter of an attempt at trial id (nil
	// when the study prunes nothing).
	newCurve(id int) *trialCurve
}

// newPool is the evaluation pool of a study with normalized options o.
func newPool(o Options, info sdk.Info, log zerolog.Logger) pool {
	pause.Watch() // an evaluation's limit passed while this process was paused is not a timeout
	return pool{timeout: o.EvalTimeout, retries: o.Retries, backoff: o.RetryBackoff, info: info, log: log}
}

// valueError is the one rule for what counts as a failure: an error, or a
// value that is NaN or infinite (it would poison the GP); for an objective
// of several declared outputs, anything but one finite value per output.
func valueError(r sdk.Result, err error, info sdk.Info) error {
	if err == nil && len(info.Outputs) > 0 {
		if err := info.CheckOutputs(r.Outputs); err != nil {
			return fmt.Errorf("objective: %w", err)
		}
		return nil
	}
	if err == nil && len(r.Outputs) > 0 {
		return fmt.Errorf("objective returned %d outputs but declares none (sdk.Info.Outputs): it returns one value", len(r.Outputs))
	}
	if err == nil && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
		return fmt.Errorf("objective returned %v", r.Value)
	}
	return err
}

// maxNeighbourReruns bounds the re-runs of one trial whose evaluation was
// stopped by another evaluation's fault (see neighbourFault), so that a
// plugin whose process always dies cannot keep a trial running forever.
const maxNeighbourReruns = 3

// neighbourFault reports whether err says that the evaluation itself did
// nothing wrong but shared a process with another evaluation that took the
// process down (loader.ErrNeighbourFault: the other call timed out). Such
// an evaluation is re-run at once without counting as an attempt: with
// --retries 0, one hanging evaluation failed every healthy one beside it.
// The error is matched by its method (NeighbourFaulter) so that host need
// not import the loader.
func neighbourFault(err error) bool {
	var nf NeighbourFaulter
	return errors.As(err, &nf) && nf.NeighbourFault()
}

// evalTrial evaluates one trial with retries and records the outcome; a
// trial abandoned because of cancellation stays in flight.
func (p pool) evalTrial(ctx, evalCtx context.Context, obj sdk.Objective, t Trial, rec recorder) error {
	reruns := 0
	for attempt := 1; ; attempt++ {
		started := time.Now()
		if err := rec.start(context.WithoutCancel(ctx), t.ID, attempt, started); err != nil {
			return err
		}
		curve := rec.newCurve(t.ID)
		r, err := p.call(evalCtx, obj, t.X, curve)
		secs := time.Since(started).Seconds()
		points, pruned := curve.close() // an abandoned attempt's later reports are refused
		if evalCtx.Err() != nil {
			return nil // abandoned: re-run on resume
		}
		if stopsRun(err) {
			return fmt.Errorf("trial %d: %w", t.ID, err) // left in flight: re-run on resume
		}
		if neighbourFault(err) && reruns < maxNeighbourReruns {
			if ctx.Err() != nil {
				return nil // shutting down: re-run on resume
			}
			reruns++
			p.log.Info().Int("trial", t.ID).Int("attempt", attempt).Err(err).Msg("re-running the evaluation, which did nothing wrong (not counted as an attempt)")
			attempt-- // the same attempt again
			continue
		}
		err = valueError(r, err, p.info)
		if err == nil || attempt > p.retries {
			if err != nil {
				p.log.Warn().Int("trial", t.ID).Int("attempts", attempt).Err(err).Msg("evaluation failed")
			}
			// Recorded even when ctx is cancelled meanwhile (during the grace).
			st := evalStats{attempts: attempt, started: started, seconds: secs, curve: points, pruned: pruned}
			return rec.finish(context.WithoutCancel(ctx), t.ID, r, err, st)
		}
		if ctx.Err() != nil {
			return nil // shutting down: leave it in flight for resume rather than retry now
		}
		wait := p.backoff << (attempt - 1)
		if wait > 30*time.Second || wait <= 0 {
			wait = 30 * time.Second
		}
		p.log.Warn().Int("trial", t.ID).Int("attempt", attempt).Dur("backoff", wait).Err(err).Msg("evaluation failed; retrying")
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
	}
}

// call runs one evaluation attempt under the per-evaluation timeout, with
// curve (unless nil) as the sdk.Reporter of its intermediate values. It
// returns when the objective does or when the attempt's context ends, so an
// objective that ignores its context cannot stall the study (its goroutine
// is left to finish on its own). Panics become errors.
func (p pool) call(evalCtx context.Context, obj sdk.Objective, x []float64, curve *trialCurve) (sdk.Result, error) {
	limit := evalLimit(p.timeout, obj)
	started := time.Now()
	cctx, cancel := evalCtx, context.CancelFunc(func() {})
	if limit > 0 {
		cctx, cancel = context.WithTimeout(evalCtx, limit)
	}
	defer cancel()
	if curve != nil {
		cctx = sdk.WithReporter(cctx, curve)
	}
	type outcome struct {
		r   sdk.Result
		err error
	}
	ch := make(chan outcome, 1)
	xc := append([]float64(nil), x...)
	go func() {
		var o outcome
		defer func() {
			if p := recover(); p != nil {
				o = outcome{err: fmt.Errorf("objective panicked: %v", p)}
			}
			ch <- o
		}()
		if m, ok := obj.(sdk.MultiOutput); ok && len(p.info.Outputs) > 0 {
			o.r.Outputs, o.err = m.EvaluateOutputs(cctx, xc)
		} else if d, ok := obj.(sdk.Detailed); ok {
			o.r, o.err = d.EvaluateDetail(cctx, xc)
		} else {
			o.r.Value, o.err = obj.Evaluate(cctx, xc)
		}
	}()
	select {
	case o := <-ch:
		if o.err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && evalCtx.Err() == nil && !neighbourFault(o.err) {
			return sdk.Result{}, timedOut(started, limit, o.err)
		}
		return o.r, boundedError(o.err)
	case <-cctx.Done():
		if evalCtx.Err() != nil {
			return sdk.Result{}, context.Cause(evalCtx)
		}
		return sdk.Result{}, timedOut(started, limit, nil)
	}
}

// timedOut is the error of an evaluation started at started whose limit
// passed (err: what the objective answered, if it did): a pausedError
// when the limit passed only because this process was paused.
func timedOut(started time.Time, limit time.Duration, err error) error {
	switch {
	case pause.Explains(started, limit):
		return pausedError{limit, pause.Since(started)}
	case err != nil:
		return boundedError(fmt.Errorf("evaluation timed out after %v: %w", limit, err))
	}
	return fmt.Errorf("evaluation timed out after %v", limit)
}

// pausedError says an evaluation's limit passed while this process was
// paused (SIGSTOP, Ctrl-Z, a suspended machine) rather than because the
// evaluation was slow: it is re-run at once without counting as an
// attempt (NeighbourFaulter), so a paused study ends as an uninterrupted one.
type pausedError struct{ limit, paused time.Duration }

func (e pausedError) Error() string {
	return fmt.Sprintf("the %v limit passed while this process was paused (%v of it); re-running the evaluation", e.limit, e.paused.Round(time.Millisecond))
}

func (pausedError) NeighbourFault() bool { return true }

// evalLimit is the host's limit on one evaluation attempt of obj: the
// user's limit, plus the objective's start-up allowance when the objective
// itself bounds each evaluation at no more than the user's limit counted
// from when it is ready to evaluate. A loader objective does (it is an
// EvalLimiter, matched by interface so that host need not import the
// loader): an evaluation re-run after its neighbour's timeout, or the first
// after a crash, waits for a new plugin process, and the time that takes
// must not count against the evaluation, or a healthy re-run under load
// times out. The loader bounds the start-up itself; the host's extended
// limit stays as a backstop.
func evalLimit(limit time.Duration, obj sdk.Objective) time.Duration {
	el, ok := obj.(EvalLimiter)
	if limit <= 0 || !ok {
		return limit
	}
	if call, startup := el.EvalLimits(); call > 0 && call <= limit {
		return limit + startup
	}
	return limit
}
