package tes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// BatchGain is one row of the batch-size diagnostic (Appendix G).
type BatchGain struct {
	B int // batch size
	// Alpha is α(B̂) in nats at the maximizing batch B̂, re-estimated with
	// base points of y_B drawn afresh after the maximization, and SE its
	// standard error (0 where Gauss–Hermite quadrature is used: TES_ep
	// with B ≤ 2, TES_sp with B = 1). The re-estimate is unbiased for
	// α(B̂); the value on the maximization's own base points is not.
	Alpha, SE float64
	// Fitted is α(B̂) on the base points it was maximized on. Where α is a
	// Monte-Carlo estimate (TES_ep B ≥ 3, TES_sp B ≥ 2) the maximization
	// selects batches whose fixed-sample error happens to be positive, so
	// Fitted overstates α(B̂); under quadrature it equals Alpha.
	Fitted   float64
	PerPoint float64    // Alpha / B: information per evaluation
	Batch    *mat.Dense // the maximizing batch B̂ (B×d)
	Seconds  float64    // wall time to maximize and re-estimate α for this size
}

// BatchSizeDiagnostic reports, for B = 1..bmax, the maximized TES value
// α*(B) (Appendix G, Fig. 7). All sizes share one Model — the same X*,
// p(x*) and EP posteriors or sample sets — so the values measure
// information about the same x* and are comparable across B: α*(B) grows
// with B and levels off once B exceeds about |X*|, which is how a user picks
// a batch size (trade the gain per evaluation against its cost). |X*| is
// s.Trusted, or max(5, bmax) when that is zero. See Model.BatchGains for
// how each size is maximized and re-estimated.
func BatchSizeDiagnostic(ctx context.Context, st *acq.State, bmax int, s Settings, opt acq.OptimizeSettings) ([]BatchGain, *Model, error) {
	if st == nil || st.GP == nil || st.Rand == nil {
		return nil, nil, fmt.Errorf("tes: batch-size diagnostic needs a GP and a random stream")
	}
	if bmax < 1 {
		return nil, nil, fmt.Errorf("tes: batch-size diagnostic: bmax %d must be positive", bmax)
	}
	k := s.Trusted
	if k <= 0 {
		k = max(5, bmax)
	}
	m, err := NewModel(ctx, st.GP, st.Rand, k, nil, s.withLog(st.Log))
	if err != nil {
		return nil, nil, err
	}
	sizes := make([]int, bmax)
	for i := range sizes {
		sizes[i] = i + 1
	}
	rows, err := m.BatchGains(ctx, sizes, opt, st.Rand)
	if err != nil {
		return nil, nil, fmt.Errorf("tes: batch-size diagnostic: %w", err)
	}
	return rows, m, nil
}

// BatchGains maximizes α over batches of each size in sizes on this one
// model (the Appendix G diagnostic for a given X*) and reports the
// maximum re-estimated with fresh base points. Each size is optimized with
// acq.Maximize under optimizeDefaults(opt, B), from TES's usual starts plus,
// when the previous entry of sizes is B−1, that size's maximizing batch
// extended by each x* of X* — so the maximized α can grow with B only as
// the information gain of a superset does, instead of depending on whether
// the larger batch's restarts rediscover the smaller optimum. Evaluating
// α̂ at the maximizer on the base points it was maximized on would
// overstate it (the maximum of a noisy function is biased upward); the
// reported Alpha is therefore a second, independent estimate (Fitted keeps
// the first). All randomness comes from rng. On an error the rows of the
// sizes already done are returned with it.
func (m *Model) BatchGains(ctx context.Context, sizes []int, opt acq.OptimizeSettings, rng *rand.Rand) ([]BatchGain, error) {
	if rng == nil {
		return nil, fmt.Errorf("tes: batch gains need a random stream")
	}
	for _, b := range sizes {
		if b < 1 {
			return nil, fmt.Errorf("tes: batch gains: batch size %d must be positive", b)
		}
	}
	_, d := m.XStar.Dims()
	var out []BatchGain
	var prev *mat.Dense // the maximizing batch of the previous size
	for _, b := range sizes {
		t0 := time.Now()
		f, err := m.Func(b, nil, rng)
		if err != nil {
			return out, fmt.Errorf("batch size %d: %w", b, err)
		}
		x, _, err := acq.Maximize(ctx, &extendedStarts{Func: f, prev: prev}, b, d, optimizeDefaults(opt, b), rng)
		if err != nil {
			return out, fmt.Errorf("batch size %d: maximize α: %w", b, err)
		}
		prev = x
		fitted, _, err := f.Estimate(x)
		if err != nil {
			return out, fmt.Errorf("batch size %d: α at the maximizer: %w", b, err)
		}
		fresh, err := m.Func(b, nil, rng)
		if err != nil {
			return out, fmt.Errorf("batch size %d: %w", b, err)
		}
		a, se, err := fresh.Estimate(x)
		if err != nil {
			return out, fmt.Errorf("batch size %d: re-estimate α: %w", b, err)
		}
		out = append(out, BatchGain{B: b, Alpha: a, SE: se, Fitted: fitted, PerPoint: a / float64(b),
			Batch: x, Seconds: time.Since(t0).Seconds()})
	}
	return out, nil
}

// extendedStarts adds to a Func's own starts the previous size's best batch
// extended by each x* of X* (in row order) when it has one row fewer.
type extendedStarts struct {
	*Func
	prev *mat.Dense
}

func (e *extendedStarts) Starts(q int) []*mat.Dense {
	out := e.Func.Starts(q)
	if e.prev == nil {
		return out
	}
	p, d := e.prev.Dims()
	if p != q-1 {
		return out
	}
	xs := e.Func.m.XStar
	k, _ := xs.Dims()
	for i := range k {
		b := mat.NewDense(q, d, nil)
		b.Slice(0, p, 0, d).(*mat.Dense).Copy(e.prev)
		b.SetRow(p, xs.RawRowView(i))
		out = append(out, b)
	}
	return out
}
