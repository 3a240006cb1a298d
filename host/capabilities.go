package host

import (
	"fmt"

	"github.com/tesbo/tesbo/acq"
	_ "github.com/tesbo/tesbo/tes" // registers the default acquisition, tes, with tes-ep and tes-sp
)

// The one place the host checks what an acquisition can do. Every
// capability is declared by the acquisition itself, as one of package
// acq's optional interfaces (acq.BatchLimiter, acq.PendingAware, acq.Sizer,
// acq.Carrier, acq.OutputWarper); an acquisition registered with acq gains
// one by implementing it, without any list here naming it. The lists shown
// in errors and in the CLI's help (SizedAcquisitions, AsyncAcquisitions,
// BatchLimits) are read off the registry. What is checked here is whether
// a study may start (or a worker join); the proposal then uses what was
// declared where it happens: acq.Sizer in proposeBatch, acq.Carrier in
// carry and OpenStudy, acq.OutputWarper in the fit (model.go).

// declared returns the acquisition registered under name, built with
// default options, whose methods declare its capabilities; nil when name is
// not registered (an acquisition plugin, known to the host only through
// Options.Proposer or Options.Suggester, which declares nothing by name).
func declared(name string) acq.Proposer {
	p, err := acq.Lookup(name, acq.Options{})
	if err != nil {
		return nil
	}
	return p
}

// declaring returns the Proposer whose declarations decide what o's
// acquisition may do: o.Proposer when set, else the registered one; nil
// for a suggester (which declares no capability) or an unknown name.
func (o Options) declaring() acq.Proposer {
	switch {
	case o.Proposer != nil:
		return o.Proposer
	case o.Suggester != nil:
		return nil
	}
	return declared(o.Acquisition)
}

// registeredWith returns the registered acquisitions, sorted by name, for
// which has reports true.
func registeredWith(has func(acq.Proposer) bool) []string {
	var names []string
	for _, n := range acq.Names() {
		if p := declared(n); p != nil && has(p) {
			names = append(names, n)
		}
	}
	return names
}

// batchLimitOf returns the limit p declares below MaxBatch, if any.
func batchLimitOf(p acq.Proposer) (acq.Limit, bool) {
	bl, ok := p.(acq.BatchLimiter)
	if !ok {
		return acq.Limit{}, false
	}
	l := bl.BatchLimit()
	return l, l.Max < MaxBatch
}

// batchLimit is the largest batch o's acquisition may propose: MaxBatch,
// or less when it declares a smaller limit (acq.BatchLimiter).
func (o Options) batchLimit() (limit int, why string) {
	if l, ok := batchLimitOf(o.declaring()); ok {
		return l.Max, fmt.Sprintf("the limit for %s (%s): %s", o.Acquisition, l.Name, l.Why)
	}
	return MaxBatch, "the limit (MaxBatch): the acquisition optimizes the batch's points jointly and its cost grows faster than the batch"
}

// BatchLimits returns the registered acquisitions that limit their batch
// below MaxBatch (acq.BatchLimiter), with their limits.
func BatchLimits() map[string]int {
	m := map[string]int{}
	for _, n := range acq.Names() {
		if l, ok := batchLimitOf(declared(n)); ok {
			m[n] = l.Max
		}
	}
	return m
}

// isSizer reports whether p sizes its batches by information gain.
func isSizer(p acq.Proposer) bool {
	_, ok := p.(acq.Sizer)
	return ok
}

// SizedAcquisitions returns the registered acquisitions that can size
// their batches by information gain (Options.AutoBatch): those
// implementing acq.Sizer.
func SizedAcquisitions() []string { return registeredWith(isSizer) }

// CheckAutoBatch returns an error unless acquisition name can size its
// batches by information gain (see SizedAcquisitions).
func CheckAutoBatch(name string) error {
	if isSizer(declared(name)) {
		return nil
	}
	return fmt.Errorf("acquisition %q cannot size its batches by information gain: an automatic batch size needs one of %v (or give a fixed batch size)", name, SizedAcquisitions())
}

// checkAutoBatch refuses AutoBatch with an acquisition that cannot size
// its batches, and a bad stopping rule.
func (o Options) checkAutoBatch() error {
	if !o.AutoBatch {
		return nil
	}
	if o.Proposer != nil || o.Suggester != nil {
		if !isSizer(o.Proposer) {
			return fmt.Errorf("the custom acquisition %q does not implement acq.Sizer, so it cannot size its batches by information gain", o.Acquisition)
		}
	} else if err := CheckAutoBatch(o.Acquisition); err != nil {
		return err
	}
	return o.BatchGain.Validate()
}

// isAsync reports whether p may propose while evaluations run.
func isAsync(p acq.Proposer) bool {
	pa, ok := p.(acq.PendingAware)
	return ok && pa.HandlesPending()
}

// AsyncAcquisitions returns the registered acquisitions that account for
// the trials still running when they propose (acq.PendingAware), and so
// can run in worker mode.
func AsyncAcquisitions() []string { return registeredWith(isAsync) }

// CheckAsync returns an error unless acquisition name can propose while
// trials are running (see AsyncAcquisitions).
func CheckAsync(name string) error {
	if isAsync(declared(name)) {
		return nil
	}
	return fmt.Errorf("acquisition %q cannot condition its proposals on running trials, so it cannot run with many workers: use one of %v, or run the study in one process on a SQLite file", name, AsyncAcquisitions())
}

// TrustedMaximizers returns the trusted maximizers X* (rows, unit-cube
// coordinates) that the study's acquisition carried out of iteration
// p.Iteration, decoded by that acquisition itself (acq.MaximizerCarrier:
// TES's, whose stored encoding stays its own). It returns none when the
// acquisition carries no maximizers, or is a plugin this process does not
// know. A study with a fidelity input gets them without it (Dim
// coordinates).
func (p *StoredPosterior) TrustedMaximizers() ([][]float64, error) {
	mc, ok := declared(p.acquisition).(acq.MaximizerCarrier)
	if !ok || len(p.AcqState) == 0 {
		return nil, nil
	}
	xs, err := mc.StoredMaximizers(p.AcqState)
	if err != nil {
		return nil, fmt.Errorf("acquisition %s: %w", p.acquisition, err)
	}
	if p.fidelity {
		d := p.Dim()
		for i, x := range xs {
			if len(x) == d+1 {
				xs[i] = x[:d] // the fidelity t: the view reads them at full training
			}
		}
	}
	return xs, nil
}
