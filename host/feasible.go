package host

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/gp/classify"
)

// feasibility returns the probability of success the acquisitions weight
// their batches by (acq.State.Feasible): a GP classifier fitted on the
// unit-cube points of every finished trial, labelled complete or failed.
// It is nil while no evaluation has failed, so studies without failures are
// unchanged, and when the fit fails (then the acquisition runs unweighted,
// with a warning). The classifier draws no random numbers: it is a function
// of the stored trials alone, so a resumed study refits the same one.
func (s *Study) feasibility(t int, reg *gp.Region) acq.Feasible {
	X, ok := labelledTrials(s.trials, s.space.Dim())
	if reg != nil {
		X, ok = labelledInRegion(reg, X, ok)
	}
	if X == nil {
		return nil
	}
	c, err := classify.Fit(X, ok)
	if err != nil {
		s.log.Warn().Int("iter", t).Err(err).Msg("cannot learn where evaluations fail; proposing without avoiding failed regions")
		return nil
	}
	failed := 0
	for _, v := range ok {
		if !v {
			failed++
		}
	}
	s.log.Debug().Int("iter", t).Int("failed", failed).Int("finished", len(ok)).
		Floats64("log_params", c.Kernel().Params()).Msg("success classifier fitted (kernel log length-scales and log variance)")
	return c
}

// labelledTrials returns the unit-cube points of the finished trials and
// whether each succeeded, or nil when none failed.
func labelledTrials(trials []Trial, d int) (*mat.Dense, []bool) {
	var us [][]float64
	var ok []bool
	failed := false
	for _, t := range trials {
		switch t.Status {
		case Complete, Failed:
			us = append(us, t.U)
			ok = append(ok, t.Status == Complete)
			failed = failed || t.Status == Failed
		}
	}
	if !failed {
		return nil, nil
	}
	X := mat.NewDense(len(us), d, nil)
	for i, u := range us {
		X.SetRow(i, u)
	}
	return X, ok
}

// replacementBeta is the UCB weight of avoidFailures' replacement points,
// μ + 2σ: they explore where evaluations are expected to succeed.
const replacementBeta = 4

// avoidFailures replaces the points of the proposed batch X whose success
// probability is below acq.FeasibleFloor. The acquisitions that maximize
// over batches already weight by it, but some proposals bypass that: TES
// when it is sure of x* (it evaluates x* itself), Thompson sampling,
// random search, acquisition plugins' own batches. The replacements are a
// greedy batch of UCB, μ + 2σ, weighted by p (acq.FeasibilityWeighted),
// with the kept points and the pending ones as already chosen; they come
// from their own random stream, so they too are a function of the seed.
func (s *Study) avoidFailures(ctx context.Context, st *acq.State, X *mat.Dense, t int) (*mat.Dense, error) {
	if st.Feasible == nil {
		return X, nil
	}
	q, d := X.Dims()
	var keep, bad []int
	for i := 0; i < q; i++ {
		if st.Feasible.LogProb(X.RawRowView(i), nil) < math.Log(acq.FeasibleFloor) {
			bad = append(bad, i)
		} else {
			keep = append(keep, i)
		}
	}
	if len(bad) == 0 {
		return X, nil
	}
	alt := *st
	alt.Rand = streamRand(s.seed, t, streamFeasible)
	alt.Pending = stackRows(st.Pending, X, keep, d)
	greedy := acq.Greedy{Scorer: acq.UCB{Beta: replacementBeta}, Lie: acq.LieBeliever,
		Settings: acq.OptimizeSettings{Workers: s.opts.AcqOptions.Optimize.Workers}}
	R, err := greedy.Propose(ctx, &alt, len(bad))
	if err != nil {
		return nil, fmt.Errorf("replace %d proposed points where evaluations are expected to fail: %w", len(bad), err)
	}
	out := mat.DenseCopyOf(X)
	for k, i := range bad {
		out.SetRow(i, R.RawRowView(k))
	}
	s.log.Info().Int("iter", t).Int("replaced", len(bad)).Float64("floor", acq.FeasibleFloor).
		Msg("replaced proposed points whose estimated probability of success is below the floor")
	return out, nil
}

// stackRows returns the rows of P (may be nil) followed by the rows idx of
// X, or nil when there are none.
func stackRows(P, X *mat.Dense, idx []int, d int) *mat.Dense {
	var rows [][]float64
	if P != nil {
		r, _ := P.Dims()
		for i := 0; i < r; i++ {
			rows = append(rows, P.RawRowView(i))
		}
	}
	for _, i := range idx {
		rows = append(rows, X.RawRowView(i))
	}
	return denseRows(rows, d)
}
