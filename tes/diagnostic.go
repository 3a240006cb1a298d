package tes

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// BatchGain is one row of the batch-size diagnostic (Appendix G).
type BatchGain struct {
	B        int        // batch size
	Alpha    float64    // max over batches of size B of α(B), nats
	SE       float64    // standard error of Alpha's estimate (0 for quadrature)
	PerPoint float64    // Alpha / B: information per evaluation
	Batch    *mat.Dense // the maximizing batch (B×d)
}

// BatchSizeDiagnostic reports, for B = 1..bmax, the maximized TES value
// α*(B) (Appendix G, Fig. 7). All sizes share one Model — the same X*,
// p(x*) and EP posteriors or sample sets — so the values measure
// information about the same x* and are comparable across B: α*(B) grows
// with B and levels off once B exceeds about |X*|, which is how a user picks
// a batch size (trade the gain per evaluation against its cost). |X*| is
// s.Trusted, or max(5, bmax) when that is zero. Each size is optimized with
// opt (zero fields: OptimizeDefaults) from TES's usual starts plus the best
// batch of size B−1 extended by each of the most probable x*.
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
	m, err := NewModel(ctx, st.GP, st.Rand, k, nil, s)
	if err != nil {
		return nil, nil, err
	}
	d := st.GP.Dim()
	var out []BatchGain
	var prev *mat.Dense
	for b := 1; b <= bmax; b++ {
		f, err := m.Func(b, nil, st.Rand)
		if err != nil {
			return nil, nil, err
		}
		x, _, err := acq.Maximize(ctx, &extendedStarts{Func: f, prev: prev}, b, d, OptimizeDefaults(opt, b), st.Rand)
		if err != nil {
			return nil, nil, fmt.Errorf("tes: batch-size diagnostic, B = %d: %w", b, err)
		}
		a, se, err := f.Estimate(x)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, BatchGain{B: b, Alpha: a, SE: se, PerPoint: a / float64(b), Batch: x})
		prev = x
	}
	return out, m, nil
}

// extendedStarts adds to a Func's own starts the previous size's best batch
// extended by one of the (up to 3) most probable x*.
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
	for _, i := range e.Func.order()[:min(3, len(e.Func.m.Probs.P))] {
		b := mat.NewDense(q, d, nil)
		b.Slice(0, p, 0, d).(*mat.Dense).Copy(e.prev)
		b.SetRow(p, e.Func.m.XStar.RawRowView(i))
		out = append(out, b)
	}
	return out
}
