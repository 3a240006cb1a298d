package host

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/tes"
)

// Size limits of a study. Options beyond them are refused by NewStudy and
// OpenStudy (and Ask refuses a larger q) instead of exhausting the machine
// (memory until the kernel kills the process, or minutes without output).
// The measurements behind each limit are in docs/results/README.md,
// "Measurements behind the code".
const (
	// MaxBatch bounds Options.Batch (and Ask's q): the acquisition
	// optimizes the q points of a batch jointly, so its cost grows faster
	// than q.
	MaxBatch = 1000
	// MaxBatchTES bounds the batch of the TES acquisitions (tes, tes-ep,
	// tes-sp), which declare it (acq.BatchLimiter, tes.MaxBatch): α(B)
	// integrates over the batch's q-dimensional outcome for every trusted
	// maximizer, with q×q covariances.
	MaxBatchTES = tes.MaxBatch
	// MaxBatchQEI and MaxBatchNEHVI bound the batch of qei and nehvi, the
	// other joint acquisitions (acq.MaxBatchQEI, acq.MaxBatchNEHVI): their
	// proposal's cost grows about as q².
	MaxBatchQEI   = acq.MaxBatchQEI
	MaxBatchNEHVI = acq.MaxBatchNEHVI
	// MaxTrusted bounds AcqOptions.Trusted, |X*|: p(x*|y_D) is one
	// (|X*|−1)-dimensional Gaussian orthant probability per trusted
	// maximizer.
	MaxTrusted = 100
	// MaxTrials bounds the budget Init + Iters·Batch: every iteration,
	// whatever the acquisition, fits a GP on all completed evaluations, in
	// memory growing as n² and time as n³.
	MaxTrials = 5000
	// MaxInit bounds Options.Init, the initial design (a budget of its own
	// to say so when the design alone is too large).
	MaxInit = MaxTrials
	// MaxDim bounds the number of parameters: each iteration maximizes the
	// acquisition (and the posterior mean, for the recommendation) over
	// the d-dimensional cube.
	MaxDim = 1000
	// MaxParallel bounds Options.Parallel: no more evaluations run at once
	// than a batch holds.
	MaxParallel = MaxBatch
	// MaxRetries bounds Options.Retries: with the backoff doubling up to
	// 30 s, 20 retries already wait about 8 minutes for one evaluation.
	MaxRetries = 20
	// MaxStudyName bounds a study's name, in bytes: a name is shown on one
	// line by every command and in the web view's URLs (a 100,000-byte
	// name was stored but could not be shown).
	MaxStudyName = 200
)

// CheckStudyName refuses a study name that is empty, longer than
// MaxStudyName bytes, not valid UTF-8, or holds a character that does not
// print (a control character, a line break, a tab): every database stores
// and every terminal shows such a name the same way.
func CheckStudyName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty study name")
	case len(name) > MaxStudyName:
		return fmt.Errorf("study name of %d bytes exceeds the limit of %d (MaxStudyName)", len(name), MaxStudyName)
	case !utf8.ValidString(name):
		return fmt.Errorf("study name %q is not valid UTF-8", name)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("study name %q begins or ends with white space, which commands and shells drop easily: name it without", name)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("study name %q holds the unprintable character %U: use letters, digits, spaces and punctuation", name, r)
		}
	}
	return nil
}

// checkLimits refuses sizes beyond the Max* limits (the batch's as the
// acquisition declares it, see batchLimit), saying which limit and why.
// Counts are compared one by one before the budget is multiplied out, so
// huge values cannot overflow it.
func (o Options) checkLimits() error {
	if limit, why := o.batchLimit(); o.Batch > limit {
		return fmt.Errorf("batch %d exceeds %d, %s; use a smaller batch", o.Batch, limit, why)
	}
	switch {
	case o.AcqOptions.Trusted > MaxTrusted:
		return fmt.Errorf("%d trusted maximizers exceed the limit of %d (MaxTrusted): p(x*|y_D) needs one (|X*|−1)-dimensional Gaussian orthant probability per trusted maximizer", o.AcqOptions.Trusted, MaxTrusted)
	case o.Init > MaxInit:
		return fmt.Errorf("initial design of %d points exceeds the limit of %d (MaxInit): a GP is fitted on every evaluation, see MaxTrials", o.Init, MaxInit)
	case o.Iters > MaxTrials || o.Init+o.Iters*o.Batch > MaxTrials:
		return fmt.Errorf("budget of %d initial points + %d iterations × batch %d exceeds the limit of %d trials (MaxTrials): every iteration fits a GP on all evaluations, in memory growing as n² and time as n³", o.Init, o.Iters, o.Batch, MaxTrials)
	case o.Parallel > MaxParallel:
		return fmt.Errorf("%d concurrent evaluations exceed the limit of %d (MaxParallel): no more evaluations run at once than a batch holds", o.Parallel, MaxParallel)
	case o.Retries > MaxRetries:
		return fmt.Errorf("%d retries exceed the limit of %d (MaxRetries): with the backoff doubling up to 30 s, %d retries already wait about 8 minutes per evaluation", o.Retries, MaxRetries, MaxRetries)
	}
	return nil
}

// CheckObjective reports why no study could take an objective of this
// Info whatever its options (a space the host cannot build, more than
// MaxDim parameters), nil when one can: what 'tesbo-host plugins' shows
// beside the loader's own checks.
func CheckObjective(info sdk.Info) error {
	space, err := infoSpace(info)
	if err != nil {
		return err
	}
	return checkDim(space)
}

// checkPathPhases refuses a categorical space on which the acquisition p
// (nil: none known) would draw sample paths whose random phases pass
// gp.MaxPathPhaseBytes at batch q: every proposal would fail and fall
// back to random points.
func checkPathPhases(space *Space, p acq.Proposer, q int) error {
	ps, ok := p.(acq.PathSampler)
	if !ok {
		return nil
	}
	choices := 0
	for _, n := range space.Categories() {
		choices += n
	}
	paths, features := ps.PathSamples(q)
	if need := float64(paths) * float64(features) * float64(choices) * 8; choices > 0 && need > gp.MaxPathPhaseBytes {
		return fmt.Errorf("the space's %d categorical choices need %.3g GB for the acquisition's %d sample paths of %d features (one random phase per feature and choice), more than the %.3g GB allowed (gp.MaxPathPhaseBytes): use fewer choices, fewer trusted maximizers (--trusted) or an acquisition without sample paths (--acq ei)",
			choices, need/1e9, paths, features, gp.MaxPathPhaseBytes/1e9)
	}
	return nil
}

// checkDim refuses spaces with more than MaxDim parameters.
func checkDim(space *Space) error {
	if d := space.Dim(); d > MaxDim {
		return fmt.Errorf("the space has %d parameters, more than the limit of %d (MaxDim): every iteration maximizes the acquisition and the posterior mean over the d-dimensional cube", d, MaxDim)
	}
	return nil
}
