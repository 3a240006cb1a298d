package tes

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// ProposeSized implements acq.Sizer: the batch grows one point at a time
// while the rule says the extra point is worth it (the paper's Appendix G).
//
// One Model serves every size (|X*| = Settings.Trusted, or max(5, maxQ)),
// so the gains measure information about the same x* and are comparable.
// For b = 1, 2, … the batch B_b of b points maximizing α(B | P) (P: the
// pending points) is found from TES's usual starts plus B_{b−1} extended by
// each x* of X*; its gain g_b = α(P ∪ B_b) − α(P) is then re-estimated on
// fresh base points (the value on the maximization's own base points is
// biased upward; see BatchGain). The batch stops at the first b whose
// B_{b+1} is not worth it (acq.GainRule.Worth(g_b, g_{b+1}), g_b
// re-estimated on B_{b+1}'s draws: sharedPrevGain), or at maxQ.
// A single point is always proposed. The cost is up to maxQ maximizations
// instead of one.
func (p *proposer) ProposeSized(ctx context.Context, st *acq.State, maxQ int, r acq.GainRule) (*mat.Dense, error) {
	if err := checkSized(st, maxQ); err != nil {
		return nil, err
	}
	m, err := p.Scorer.model(ctx, st, maxQ, nil)
	if err != nil {
		return nil, err
	}
	X, _, err := p.grow(ctx, m, st, st.Pending, maxQ, r.WithDefaults(), true)
	return X, err
}

// ProposeSized implements acq.Sizer for the default acquisition: with one
// slot it proposes as Propose does; while the study lacks its opening
// design the batch is the space-filling points still missing (at most
// maxQ; see Deliver); otherwise, when x̄ is worth an
// evaluation (see Deliver), the batch is x̄ plus the TES points worth their
// evaluation given x̄ and the pending points (possibly none), else TES's
// sized batch alone. Those TES points are searched over the whole cube,
// without Propose's trust region: the sizing rule grows the batch by TES's
// whole-cube α and was measured that way.
func (p *Deliver) ProposeSized(ctx context.Context, st *acq.State, maxQ int, r acq.GainRule) (*mat.Dense, error) {
	if err := checkSized(st, maxQ); err != nil {
		return nil, err
	}
	if maxQ == 1 {
		return p.Propose(ctx, st, 1)
	}
	s := p.Settings.withDefaults()
	if F := s.design(st, maxQ); F != nil {
		return F, nil
	}
	xbar, _, worth, err := p.recommendation(ctx, st, s)
	if err != nil {
		return nil, err
	}
	m, err := p.TES.Scorer.model(ctx, st, maxQ, xbar)
	if err != nil {
		return nil, err
	}
	r = r.WithDefaults()
	if !worth {
		X, _, err := p.TES.grow(ctx, m, st, st.Pending, maxQ, r, true)
		return X, err
	}
	X, _, err := p.TES.grow(ctx, m, st, stackRows(st.Pending, xbar), maxQ-1, r, false)
	if err != nil {
		return nil, err
	}
	return stackRows(xbar, X), nil
}

func checkSized(st *acq.State, maxQ int) error {
	if st == nil || st.GP == nil || st.Rand == nil {
		return fmt.Errorf("tes: state needs a GP and a random stream")
	}
	if maxQ < 1 {
		return fmt.Errorf("tes: maximum batch size %d must be positive", maxQ)
	}
	return nil
}

// grow returns the batch of at most maxQ points chosen by the rule r (see
// Proposer.ProposeSized) and the gains g_1, g_2, … of the sizes it tried.
// With first false even the first point must be worth it (g_1 against 0),
// and the batch may be empty (nil).
func (p *proposer) grow(ctx context.Context, m *Model, st *acq.State, pending *mat.Dense, maxQ int, r acq.GainRule, first bool) (*mat.Dense, []float64, error) {
	var best *mat.Dense
	var gains []float64
	alphaP := -1.0 // α(P), estimated once so that all gains share it
	prevGain := 0.0
	for b := 1; b <= maxQ; b++ {
		f, err := m.Func(b, pending, st.Rand)
		if err != nil {
			return nil, gains, err
		}
		if alphaP < 0 {
			alphaP = f.alpha0
		}
		x, err := p.maximizeFrom(ctx, f, st, b, best)
		if err != nil {
			return nil, gains, err
		}
		fresh, err := m.Func(b, pending, st.Rand)
		if err != nil {
			return nil, gains, err
		}
		a, _, err := fresh.Estimate(x)
		if err != nil {
			return nil, gains, fmt.Errorf("tes: α of a batch of %d: %w", b, err)
		}
		g := a + fresh.alpha0 - alphaP
		gains = append(gains, g)
		prev, err := sharedPrevGain(fresh, best, prevGain, alphaP)
		if err != nil {
			return nil, gains, err
		}
		if (b > 1 || !first) && !r.Worth(prev, g) {
			break
		}
		best, prevGain = x, g
	}
	st.Log.Debug().Floats64("gains", gains).Int("batch", rowsOf(best)).Msg("tes: batch sized by information gain")
	return best, gains, nil
}

// sharedPrevGain returns the previous size's gain g_{b−1} (of batch prev)
// re-estimated on the first rows of fresh's base points, the ones g_b was
// estimated on (Func.headAlpha), so that the rule compares g_b with it
// on one draw. Each fresh estimate of a Monte-Carlo α carries an error of
// about 0.03 nats (|X*| = 5, 512 base points), the size of the increments
// the rule weighs (0.02 nats or 5%): with independent draws the batch
// stopped where the noise said. It returns prevGain unchanged where α is a
// quadrature or there is no previous batch.
func sharedPrevGain(fresh *Func, prev *mat.Dense, prevGain, alphaP float64) (float64, error) {
	if prev == nil {
		return prevGain, nil
	}
	a, ok, err := fresh.headAlpha(prev)
	if err != nil || !ok {
		return prevGain, err
	}
	return a - alphaP, nil
}

func rowsOf(X *mat.Dense) int {
	if X == nil {
		return 0
	}
	r, _ := X.Dims()
	return r
}
