package host

import (
	"errors"
	"time"
)

// The contract between the host and the handles of plugins (package
// host/loader's Objective and Error), beyond package sdk's interfaces. A
// handle's Go type implements every optional sdk interface (sdk.Configurable,
// sdk.NoiseFree, ...) because what the plugin behind it implements is known
// only at run time; these interfaces let it say what it really does. They
// are named here, and the loader's tests assert that its types implement
// them, so that the host need not import the loader and any other
// objective may implement them too.

// ConfigureSupporter is implemented by an objective handle whose Go type
// implements sdk.Configurable for every plugin: SupportsConfigure reports
// whether the plugin behind it does (when it does not, the objective takes
// no parameters).
type ConfigureSupporter interface {
	SupportsConfigure() bool
}

// NoiseFreeSupporter is implemented by an objective handle whose Go type
// implements sdk.NoiseFree for every plugin: SupportsNoiseFree reports
// whether the plugin behind it does (see NoiseFreeOf).
type NoiseFreeSupporter interface {
	SupportsNoiseFree() bool
}

// EvalLimiter is implemented by objectives that bound their own
// evaluations: call is the limit on one call once the objective is ready
// to evaluate (0: none), startup the most that getting ready (restarting a
// plugin process) may take first. With call no longer than
// Options.EvalTimeout, the host extends its own limit by startup, so that
// a restart does not count against the evaluation.
type EvalLimiter interface {
	EvalLimits() (call, startup time.Duration)
}

// NeighbourFaulter is implemented by evaluation errors that can say the
// evaluation did nothing wrong but shared a process with another that took
// it down (the loader's ErrNeighbourFault), or ran past its limit only
// because the host process was paused (ErrPaused): the host re-runs such
// an evaluation at once, without counting it as an attempt.
type NeighbourFaulter interface {
	NeighbourFault() bool
}

// ReportsSupporter is implemented by an objective handle that knows
// whether the objective behind it reports intermediate values
// (sdk.Report): a study with a pruner warns when it does not.
type ReportsSupporter interface {
	SupportsReports() bool
}

// RunStopper is implemented by evaluation errors that can say no
// evaluation can go on with this objective (the loader's ErrChanged: a
// plugin process restarted mid-run describes another objective). The run
// then stops with the error, the trial left in flight for resume (which
// checks the objective against the study), rather than failing every
// trial after it.
type RunStopper interface {
	StopsRun() bool
}

// stopsRun reports whether err is a RunStopper that stops the run.
func stopsRun(err error) bool {
	var rs RunStopper
	return errors.As(err, &rs) && rs.StopsRun()
}
