package acq

import (
	"context"
	"math/rand/v2"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// OutputKind says what a study wants of one of its outputs.
type OutputKind int

const (
	// Objective outputs are maximized (the host negates minimized ones).
	Objective OutputKind = iota
	// Constraint outputs are feasible where their oriented value is ≥ 0:
	// the host maps "y ≤ b" to b − y and "y ≥ b" to y − b.
	Constraint
)

// Output is one modelled output of a study with several outputs, in the
// acquisition's frame: oriented so that larger is better (objectives) or
// feasible at ≥ 0 (constraints).
type Output struct {
	Name string
	Kind OutputKind
	// GP is fitted on the [0,1]^d inputs of MultiState.X and this output's
	// values in model units z (warped and standardized by the host).
	GP *gp.GP
	// ToValue maps model units z back to the oriented value y, and ToModel
	// maps y to z. Both are increasing, so dominance and feasibility read
	// the same in either unit; hypervolumes and constraint thresholds are
	// measured in oriented values (a constraint is feasible where
	// z ≥ ToModel(0)).
	ToValue, ToModel func(float64) float64
}

// MultiState is one BO iteration's view of a study with several outputs
// (objectives and/or outcome constraints). Its fields other than Outputs,
// X, Y and RefPoint mean what State's do.
type MultiState struct {
	Outputs []Output
	// X (n×d) holds the evaluated points every output was observed at and
	// Y (n×m) their oriented values, one column per entry of Outputs.
	X, Y *mat.Dense
	// RefPoint has one oriented value per Objective output, in Outputs'
	// order: the hypervolume is measured above it. It is nil for a study
	// with one objective.
	RefPoint []float64
	// RefPointDeclared says RefPoint is the user's (sdk.Info.RefPoint,
	// --ref-point), a statement of which trade-offs matter, rather than
	// one derived from the observations, which moves as the front grows.
	RefPointDeclared bool

	Iter      int
	Rand      *rand.Rand
	Pending   *mat.Dense
	Log       zerolog.Logger
	Feasible  Feasible
	IntStep   []float64
	Evaluated int
}

// MultiProposer is implemented by acquisitions that optimize studies with
// several outputs. The host calls ProposeMulti, never Propose, for such a
// study, and refuses an acquisition without it there.
type MultiProposer interface {
	ProposeMulti(ctx context.Context, s *MultiState, q int) (*mat.Dense, error)
}

// OutputsOnly is implemented by a MultiProposer that has no form for a
// study of one value (its Propose only errs): the host refuses it there
// when the study is made, rather than falling back to random points at
// every iteration.
type OutputsOnly interface {
	OutputsOnly()
}

// OutputsChecker is implemented by a MultiProposer that takes only some
// mixes of outputs: CheckOutputs says why it cannot optimize a study of
// objectives objective outputs and constraints constraint outputs (nil
// when it can). The host asks when the study is made.
type OutputsChecker interface {
	CheckOutputs(objectives, constraints int) error
}

// ContinuousOnly is implemented by an acquisition (or the Scorer of a
// Greedy or Optimized one) that needs the GP's derivatives, which the
// kernel of a categorical parameter has not: the host refuses it on a
// space with one when the study is made (NeedsContinuous).
type ContinuousOnly interface {
	ContinuousOnly()
}

// NeedsContinuous reports whether p, or the Scorer it optimizes, is
// ContinuousOnly.
func NeedsContinuous(p Proposer) bool {
	switch w := p.(type) {
	case ContinuousOnly:
		return true
	case Greedy:
		_, ok := w.Scorer.(ContinuousOnly)
		return ok
	case Optimized:
		_, ok := w.Scorer.(ContinuousOnly)
		return ok
	}
	return false
}
