package sdk

import "context"

// Reporter receives an evaluation's intermediate values. The host puts one
// in the context it passes to Evaluate when the study stops evaluations
// early (a pruner, e.g. tesbo-host run --pruner median); objectives call it
// through Report.
type Reporter interface {
	// Report records the value the evaluation reached at step (an epoch,
	// say; steps strictly increase) and says whether the host wants the
	// evaluation to stop now. err is non-nil when the value could not be
	// recorded (the evaluation should then return it).
	Report(step int, value float64) (prune bool, err error)
}

type reporterKey struct{}

// WithReporter returns ctx carrying r for Report (the host and the plugin
// servers use it; an objective never needs to).
func WithReporter(ctx context.Context, r Reporter) context.Context {
	return context.WithValue(ctx, reporterKey{}, r)
}

// ReporterFrom returns the Reporter ctx carries, if any.
func ReporterFrom(ctx context.Context) (Reporter, bool) {
	r, ok := ctx.Value(reporterKey{}).(Reporter)
	return r, ok && r != nil
}

// Report tells the host the value an evaluation reached at step (in the
// objective's native units and sign, like Evaluate's result) and returns
// whether the host wants it to stop. An objective that trains in steps
// calls it after each one, and when prune is true stops and returns its
// last value (the host then records the trial as pruned at that step):
//
//	for epoch := 1; epoch <= epochs; epoch++ {
//		acc = trainOneEpoch()
//		if prune, err := sdk.Report(ctx, epoch, acc); err != nil || prune {
//			return acc, err
//		}
//	}
//	return acc, nil
//
// Without a reporter in ctx (no pruner, or an older host) Report records
// nothing and returns false, so the objective simply runs to its end. It
// works the same in every kind of plugin: a Go program serving with
// ServeObjective, a Yaegi script, an objective embedded in a Go program.
func Report(ctx context.Context, step int, value float64) (prune bool, err error) {
	r, ok := ReporterFrom(ctx)
	if !ok {
		return false, nil
	}
	return r.Report(step, value)
}
