package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

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

// evaluate runs the batch on Options.Parallel workers. Only storage errors
// are returned; evaluation errors become failed trials.
func (s *Study) evaluate(ctx, evalCtx context.Context, obj sdk.Objective, batch []Trial) error {
	jobs := make(chan Trial)
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr error
	workers := min(s.opts.Parallel, len(batch))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				if err := s.evalTrial(ctx, evalCtx, obj, t); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
				}
			}
		}()
	}
feed:
	for _, t := range batch {
		select {
		case jobs <- t:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return firstErr
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
func (s *Study) evalTrial(ctx, evalCtx context.Context, obj sdk.Objective, t Trial) error {
	reruns := 0
	for attempt := 1; ; attempt++ {
		started := time.Now()
		if err := s.start(t.ID, attempt, started); err != nil {
			return err
		}
		r, err := s.call(evalCtx, obj, t.X)
		secs := time.Since(started).Seconds()
		if evalCtx.Err() != nil {
			return nil // abandoned: re-run on resume
		}
		if neighbourFault(err) && reruns < maxNeighbourReruns {
			if ctx.Err() != nil {
				return nil // shutting down: re-run on resume
			}
			reruns++
			s.log.Info().Int("trial", t.ID).Int("attempt", attempt).Err(err).Msg("evaluation stopped by another evaluation's fault; re-running it (not counted as an attempt)")
			attempt-- // the same attempt again
			continue
		}
		if err == nil && (math.IsNaN(r.Value) || math.IsInf(r.Value, 0)) {
			err = fmt.Errorf("objective returned %v", r.Value)
		}
		if err == nil || attempt > s.opts.Retries {
			if err != nil {
				s.log.Warn().Int("trial", t.ID).Int("attempts", attempt).Err(err).Msg("evaluation failed")
			}
			// Recorded even when ctx is cancelled meanwhile (during the grace).
			return s.finish(context.WithoutCancel(ctx), t.ID, r, err, evalStats{attempts: attempt, started: started, seconds: secs})
		}
		if ctx.Err() != nil {
			return nil // shutting down: leave it in flight for resume rather than retry now
		}
		wait := s.opts.RetryBackoff << (attempt - 1)
		if wait > 30*time.Second || wait <= 0 {
			wait = 30 * time.Second
		}
		s.log.Warn().Int("trial", t.ID).Int("attempt", attempt).Dur("backoff", wait).Err(err).Msg("evaluation failed; retrying")
		timer := time.NewTimer(wait)
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil
		}
	}
}

// call runs one evaluation attempt under the per-evaluation timeout. It
// returns when the objective does or when the attempt's context ends, so an
// objective that ignores its context cannot stall the study (its goroutine
// is left to finish on its own). Panics become errors.
func (s *Study) call(evalCtx context.Context, obj sdk.Objective, x []float64) (sdk.Result, error) {
	limit := evalLimit(s.opts.EvalTimeout, obj)
	cctx, cancel := evalCtx, context.CancelFunc(func() {})
	if limit > 0 {
		cctx, cancel = context.WithTimeout(evalCtx, limit)
	}
	defer cancel()
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
		if d, ok := obj.(sdk.Detailed); ok {
			o.r, o.err = d.EvaluateDetail(cctx, xc)
		} else {
			o.r.Value, o.err = obj.Evaluate(cctx, xc)
		}
	}()
	select {
	case o := <-ch:
		if o.err != nil && errors.Is(cctx.Err(), context.DeadlineExceeded) && evalCtx.Err() == nil {
			o.err = fmt.Errorf("evaluation timed out after %v: %w", limit, o.err)
		}
		return o.r, boundedError(o.err)
	case <-cctx.Done():
		if evalCtx.Err() != nil {
			return sdk.Result{}, context.Cause(evalCtx)
		}
		return sdk.Result{}, fmt.Errorf("evaluation timed out after %v", limit)
	}
}

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
