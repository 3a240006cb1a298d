package acq

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Defaults of GainRule.
const (
	// DefaultMinGain is GainRule.MinGain's default, in nats.
	DefaultMinGain = 0.02
	// DefaultRelGain is GainRule.RelGain's default.
	DefaultRelGain = 0.05
)

// GainRule decides when a batch is large enough: with α_b the information
// gain of the best batch of b points (given the pending ones), one more
// point is added while
//
//	α_{b+1} − α_b ≥ max(MinGain, RelGain · α_b),
//
// that is while it adds at least MinGain nats and at least the fraction
// RelGain of what the batch already gains. The zero value takes the
// defaults (0.02 nats, 5%); a negative field disables its half of the rule.
type GainRule struct {
	MinGain float64 `json:"min_gain,omitempty"`
	RelGain float64 `json:"rel_gain,omitempty"`
}

// WithDefaults returns r with zero fields replaced by the defaults.
func (r GainRule) WithDefaults() GainRule {
	if r.MinGain == 0 {
		r.MinGain = DefaultMinGain
	}
	if r.RelGain == 0 {
		r.RelGain = DefaultRelGain
	}
	return r
}

// Validate refuses non-finite thresholds.
func (r GainRule) Validate() error {
	for _, v := range []float64{r.MinGain, r.RelGain} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("batch gain thresholds must be finite, got %v", v)
		}
	}
	return nil
}

// Worth reports whether growing a batch whose gain is prev (nats) to one
// whose gain is next is worth the extra point (see GainRule; r must have
// its defaults applied).
func (r GainRule) Worth(prev, next float64) bool {
	return next-prev >= math.Max(math.Max(r.MinGain, 0), math.Max(r.RelGain, 0)*prev)
}

// Sizer is implemented by Proposers that choose the size of their batch
// (the TES paper's Appendix G: the information gain α(B) of batches of
// different sizes is comparable, so the batch can stop growing where one
// more point adds little). ProposeSized returns between 1 and maxQ points,
// as many as the rule says are worth their evaluation, and must be as
// deterministic as Propose (a function of the state and its random
// stream), so that a resumed study re-derives the same sizes.
type Sizer interface {
	Proposer
	ProposeSized(ctx context.Context, s *State, maxQ int, r GainRule) (*mat.Dense, error)
}
