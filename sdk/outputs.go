package sdk

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Goal says what a study wants of one of an objective's outputs.
type Goal int

const (
	// Maximize is an objective output the study maximizes.
	Maximize Goal = iota
	// Minimize is an objective output the study minimizes.
	Minimize
	// Constraint is an outcome constraint: a trial is feasible when the
	// output lies on the Feasible side of Bound.
	Constraint
)

// String returns "maximize", "minimize", "constraint" or "Goal(n)".
func (g Goal) String() string {
	switch g {
	case Maximize:
		return "maximize"
	case Minimize:
		return "minimize"
	case Constraint:
		return "constraint"
	}
	return fmt.Sprintf("Goal(%d)", int(g))
}

// Side is the feasible side of a Constraint's Bound.
type Side int

const (
	// AtMost: feasible when the output is ≤ Bound.
	AtMost Side = iota + 1
	// AtLeast: feasible when the output is ≥ Bound.
	AtLeast
)

// Output is one named output of an objective that returns several from
// each evaluation (Info.Outputs): an objective to maximize or minimize, or
// a constraint that is feasible on one side of its bound.
type Output struct {
	Name string
	Goal Goal
	// Feasible and Bound are a Constraint's: the output is feasible when
	// it is ≤ Bound (AtMost) or ≥ Bound (AtLeast). Leave both unset for
	// Maximize and Minimize.
	Feasible Side     `json:",omitempty"`
	Bound    *float64 `json:",omitempty"`
}

// Satisfied reports whether a Constraint output's value v is feasible
// (always true for objectives).
func (o Output) Satisfied(v float64) bool {
	if o.Goal != Constraint || o.Bound == nil {
		return true
	}
	if o.Feasible == AtLeast {
		return v >= *o.Bound
	}
	return v <= *o.Bound
}

// Feasible reports whether values, one per output of i, satisfy every
// constraint output (Satisfied), as observed.
func (i Info) Feasible(values []float64) bool {
	for k, o := range i.Outputs {
		if k < len(values) && !o.Satisfied(values[k]) {
			return false
		}
	}
	return true
}

// Bound returns a pointer to v, for Output.Bound and Info.Optimum literals.
func Bound(v float64) *float64 { return &v }

// MaxOutputs bounds len(Info.Outputs): every output is one more GP fitted
// per iteration.
const MaxOutputs = 16

// MaxObjectives bounds the objective outputs (Maximize or Minimize) among
// Info.Outputs; constraints do not count. A study's hypervolume, which its
// records report and its default acquisition's exploitation steps
// maximize, is exact, and exact hypervolumes grow exponentially with the
// objectives: over a front of 5000 points (a study's largest budget) one
// took 9 s with 6 objectives and 43 s with 7, on 2 cores (package pareto's
// BenchmarkHypervolume measures smaller fronts).
const MaxObjectives = 6

// MultiOutput is implemented by objectives that declare Info.Outputs: the
// host calls EvaluateOutputs instead of Evaluate and gets one value per
// declared output, in Info.Outputs' order and in native units. (Evaluate
// is still needed to satisfy Objective; the host never calls it for such
// an objective, so it may return the first output or an error.) A
// Detailed objective may instead fill Result.Outputs in EvaluateDetail;
// one that implements both is called through EvaluateOutputs, embedded
// or as a plugin alike.
type MultiOutput interface {
	EvaluateOutputs(ctx context.Context, x []float64) ([]float64, error)
}

// Objectives returns the indices in Outputs of the objective outputs
// (Maximize or Minimize), in order.
func (i Info) Objectives() []int {
	var out []int
	for k, o := range i.Outputs {
		if o.Goal != Constraint {
			out = append(out, k)
		}
	}
	return out
}

// ErrOutputCount is wrapped by Info.CheckOutputs when an evaluation
// returned a number of outputs other than the Info declares.
var ErrOutputCount = errors.New("wrong number of outputs")

// CheckOutputs returns nil when values holds one finite value per output
// the Info declares, in the order of Outputs; otherwise an error that names
// the first offending output (wrapping ErrOutputCount when the count is
// wrong). The host counts an evaluation that fails it as failed: a NaN or
// an infinity would poison the output's GP.
func (i Info) CheckOutputs(values []float64) error {
	if len(values) != len(i.Outputs) {
		return fmt.Errorf("%w: got %d, the objective declares %d (one value per Info.Outputs entry, in order)", ErrOutputCount, len(values), len(i.Outputs))
	}
	for k, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("output %d (%s) is %v", k, quoteName(i.Outputs[k].Name), v)
		}
	}
	return nil
}

// validateOutputs checks Info.Outputs and Info.RefPoint (see Info.Validate).
func (i Info) validateOutputs() error {
	if len(i.Outputs) == 0 {
		if len(i.RefPoint) > 0 {
			return fmt.Errorf("%w: a reference point needs several objective outputs (declare Info.Outputs)", ErrBadSpace)
		}
		return nil
	}
	if len(i.Outputs) > MaxOutputs {
		return fmt.Errorf("%w: %d outputs, at most %d are allowed", ErrBadSpace, len(i.Outputs), MaxOutputs)
	}
	if i.Minimize || i.Optimum != nil {
		return fmt.Errorf("%w: an objective with Outputs says per output what to minimize (Goal) and has no Optimum; leave Info.Minimize and Info.Optimum unset", ErrBadSpace)
	}
	seen := make(map[string]bool, len(i.Outputs))
	for k, o := range i.Outputs {
		if err := o.validate(); err != nil {
			return fmt.Errorf("%w: output %d (%s): %w", ErrBadSpace, k, quoteName(o.Name), err)
		}
		if seen[o.Name] {
			return fmt.Errorf("%w: output %d (%s): duplicate name", ErrBadSpace, k, quoteName(o.Name))
		}
		seen[o.Name] = true
	}
	objs := i.Objectives()
	if len(objs) == 0 {
		return fmt.Errorf("%w: no objective among the outputs (declare at least one with Goal sdk.Maximize or sdk.Minimize)", ErrBadSpace)
	}
	if len(objs) > MaxObjectives {
		return fmt.Errorf("%w: %d objectives, at most %d are allowed (a study's exact hypervolume grows exponentially with them): combine objectives, or declare some as constraints with a Bound", ErrBadSpace, len(objs), MaxObjectives)
	}
	return CheckRefPoint(i.RefPoint, len(objs))
}

// CheckRefPoint checks a reference point for a study with m objective
// outputs: none, or m finite values (and m ≥ 2).
func CheckRefPoint(ref []float64, m int) error {
	if err := ValidRefPoint(ref, m); err != nil {
		return fmt.Errorf("%w: %v", ErrBadSpace, err)
	}
	return nil
}

// ValidRefPoint reports why ref cannot be the reference point of m
// objective outputs (nil when it can, or when ref is empty), as
// CheckRefPoint does but without calling the objective's Info malformed:
// for a reference point the user gives apart from the Info
// (host.Options.RefPoint, tesbo-host run --ref-point).
func ValidRefPoint(ref []float64, m int) error {
	if len(ref) == 0 {
		return nil
	}
	if m < 2 {
		// m = 0: one value, no Outputs; m = 1: one objective output
		// among constraints. Either way one objective.
		return errors.New("a reference point is for several objectives; this objective has one")
	}
	if len(ref) != m {
		return fmt.Errorf("reference point has %d values, want one per objective output (%d)", len(ref), m)
	}
	for k, v := range ref {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("reference point value %d is %v (want finite values)", k, v)
		}
	}
	return nil
}

func (o Output) validate() error {
	switch {
	case strings.TrimSpace(o.Name) == "":
		return fmt.Errorf("empty name (name every output)")
	case checkName(o.Name) != nil:
		return checkName(o.Name)
	case o.Goal != Maximize && o.Goal != Minimize && o.Goal != Constraint:
		return fmt.Errorf("unknown goal %d (use sdk.Maximize, sdk.Minimize or sdk.Constraint)", int(o.Goal))
	case o.Goal != Constraint && (o.Bound != nil || o.Feasible != 0):
		return fmt.Errorf("a %v output has no Bound or Feasible side (those are a Constraint's)", o.Goal)
	case o.Goal != Constraint:
		return nil
	case o.Bound == nil:
		return fmt.Errorf("a constraint needs a Bound (e.g. Bound: sdk.Bound(1.5))")
	case math.IsNaN(*o.Bound) || math.IsInf(*o.Bound, 0):
		return fmt.Errorf("bound %v is not finite", *o.Bound)
	case o.Feasible != AtMost && o.Feasible != AtLeast:
		return fmt.Errorf("a constraint needs its Feasible side (sdk.AtMost: output ≤ Bound, or sdk.AtLeast)")
	}
	return nil
}
