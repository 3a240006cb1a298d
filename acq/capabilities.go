package acq

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Capabilities. A Proposer declares what it can do beyond Propose by
// implementing small optional interfaces, as gonum/optimize's methods
// declare what they need (Needser): the host checks them in one place
// (host/capabilities.go), so an acquisition gains a capability by
// implementing a method, never by being added to a list of names. The
// capabilities are
//
//   - BatchLimiter: the largest batch it proposes jointly, when that is
//     smaller than the host's general limit;
//   - PendingAware: it accounts for the points still being evaluated, so
//     it may propose while evaluations run (the host's worker mode);
//   - Sizer: it sizes its batches by information gain (sizer.go);
//   - Carrier: it carries state from one iteration to the next, which the
//     host stores so that a resumed study proposes what an uninterrupted
//     one would (acq.go); MaximizerCarrier: that state holds trusted
//     maximizers, which a study's viewer can show;
//   - OutputWarper: it wants its GP fitted to warped observations
//     (warp.go);
//   - FidelityProposer: it chooses fidelities as well as points, for a
//     multi-fidelity study.

// Limit is a size limit an acquisition declares.
type Limit struct {
	// Max is the largest size accepted.
	Max int
	// Name is the name the limit is documented under (error messages cite
	// it, e.g. "MaxBatchTES").
	Name string
	// Why says why the limit exists, as one clause for an error message.
	Why string
}

// BatchLimiter is implemented by Proposers whose cost grows so fast with
// the batch that they accept fewer points per batch than the host's
// general limit (host.MaxBatch, which bounds every acquisition): TES
// integrates over the batch's q-dimensional outcome for every trusted
// maximizer. The host refuses a larger batch before the study starts.
type BatchLimiter interface {
	BatchLimit() Limit
}

// PathSampler is implemented by Proposers that draw whole-function
// posterior samples (gp.SamplePaths): PathSamples says how many paths of
// how many features a batch of q points draws at once, so that the host
// can refuse, before a study starts, a categorical space whose paths'
// random phases would pass gp.MaxPathPhaseBytes (one per feature and
// choice of every path).
type PathSampler interface {
	PathSamples(q int) (paths, features int)
}

// PendingAware is implemented by Proposers that account for
// State.Pending, the points proposed earlier and still being evaluated,
// as the method they implement intends: joint and greedy batch methods
// condition on them (TES, qEI, qEI-CL, BUCB, LP-EI), random search needs
// not (its points depend on nothing, and the host moves a point that
// repeats a running one). HandlesPending reports whether it does. Only
// such an acquisition may propose while evaluations run, as it does in the
// host's worker mode; a sequential method (EI, PI, UCB, MES, PES, TS)
// would there be a different method than the one it names.
type PendingAware interface {
	HandlesPending() bool
}

// MaximizerCarrier is implemented by Carriers whose carried state holds
// trusted maximizers X* (TES: the last iteration's X*). StoredMaximizers
// decodes a state that CarriedState returned, and a study stored, into
// X*'s rows in unit-cube coordinates; an empty state gives none. The
// carried state's encoding stays the acquisition's own: whoever wants the
// maximizers asks the acquisition that wrote them.
type MaximizerCarrier interface {
	Carrier
	StoredMaximizers(state []byte) ([][]float64, error)
}

// Batch limits of the joint acquisitions, which optimize the batch's q·d
// coordinates at once, each evaluation integrating over the batch's
// q-dimensional outcome: their cost per proposal grows about as q² (on a
// 2-d problem from 2 evaluations, one process on a shared 2-core machine:
// qei 2.2 s at q = 50, 10.5 s at 100, 37 s at 200; nehvi with 2
// objectives 39 s at q = 20, 90 s at 32, 176 s at 50). The greedy
// acquisitions (qei-cl, bucb, ei, ...) grow about as q and take larger
// batches.
const (
	// MaxBatchQEI bounds qei's batch.
	MaxBatchQEI = 100
	// MaxBatchNEHVI bounds nehvi's batch.
	MaxBatchNEHVI = 32
)

// BatchLimit implements BatchLimiter: MaxBatchQEI.
func (qei) BatchLimit() Limit {
	return Limit{Max: MaxBatchQEI, Name: "MaxBatchQEI", Why: "q-EI optimizes the batch jointly over Monte-Carlo draws of its q-dimensional outcome (for larger batches: qei-cl)"}
}

// BatchLimit implements BatchLimiter: MaxBatchNEHVI.
func (nehvi) BatchLimit() Limit {
	return Limit{Max: MaxBatchNEHVI, Name: "MaxBatchNEHVI", Why: "NEHVI optimizes the batch jointly over the hypervolume its q-dimensional outcome adds (for larger batches: parego)"}
}

// BatchLimit implements BatchLimiter: Optimized limits its batch when its
// Scorer does (otherwise a Max beyond any batch: no limit of its own).
func (o Optimized) BatchLimit() Limit {
	if bl, ok := o.Scorer.(BatchLimiter); ok {
		return bl.BatchLimit()
	}
	return Limit{Max: math.MaxInt}
}

// HandlesPending implements PendingAware: q-EI integrates over the pending
// points with the batch (they enter the joint distribution).
func (qei) HandlesPending() bool { return true }

// HandlesPending implements PendingAware: Optimized handles pending points
// when its Scorer does.
func (o Optimized) HandlesPending() bool {
	pa, ok := o.Scorer.(PendingAware)
	return ok && pa.HandlesPending()
}

// HandlesPending implements PendingAware for the batch methods (Greedy.Async).
func (g Greedy) HandlesPending() bool { return g.Async }

// HandlesPending implements PendingAware: LP-EI penalizes around the
// pending points as around the batch's own.
func (localPenalization) HandlesPending() bool { return true }

// HandlesPending implements PendingAware: random points depend on nothing.
func (random) HandlesPending() bool { return true }

// FidelityCost is the cost of an evaluation at fidelity t ∈ (0, 1] (the
// last coordinate of a multi-fidelity study's points, t = step/Steps), in
// units of one evaluation at full fidelity: Fixed + t. Fixed is the part
// every evaluation pays whatever its length (start-up, data loading).
type FidelityCost struct {
	Fixed float64
	// Steps is the number of fidelities: t takes the values s/Steps,
	// s = 1..Steps.
	Steps int
}

// At returns the cost of an evaluation at fidelity t.
func (c FidelityCost) At(t float64) float64 { return c.Fixed + t }

// Snap returns the fidelity of the step at or above t (at least 1/Steps,
// at most 1): the host stops an evaluation at that step.
func (c FidelityCost) Snap(t float64) float64 {
	s := math.Ceil(t*float64(c.Steps) - 1e-9)
	return math.Min(math.Max(s, 1), float64(c.Steps)) / float64(c.Steps)
}

// FidelityProposer is implemented by Proposers that choose, for a
// multi-fidelity study, the fidelity of each point as well as the point.
// The State's GP is over d+1 coordinates, the last the fidelity t ∈ (0, 1]
// (t = 1 is a full evaluation), and its pending points carry their
// fidelity. ProposeFidelity returns q×(d+1) points whose last coordinate
// is a fidelity snapped with cost.Snap.
type FidelityProposer interface {
	ProposeFidelity(ctx context.Context, st *State, q int, cost FidelityCost) (*mat.Dense, error)
}
