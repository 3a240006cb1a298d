package sdk

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// ParamKind is how a parameter's native values are laid out between its
// bounds. The host maps every kind to [0, 1] itself, so objectives and
// acquisitions never deal with the transform.
type ParamKind int

const (
	// Float is a real parameter, uniform between Low and High.
	Float ParamKind = iota
	// Int is an integer parameter; the host rounds to the nearest integer in
	// [Low, High] before calling Evaluate.
	Int
	// LogFloat is a positive real parameter, uniform in log between Low and
	// High (Low > 0), e.g. a learning rate.
	LogFloat
)

// String returns "float", "int", "logfloat" or "ParamKind(n)".
func (k ParamKind) String() string {
	switch k {
	case Float:
		return "float"
	case Int:
		return "int"
	case LogFloat:
		return "logfloat"
	}
	return fmt.Sprintf("ParamKind(%d)", int(k))
}

// Param is one dimension of an objective's search space.
type Param struct {
	Name      string
	Kind      ParamKind
	Low, High float64 // inclusive bounds in native units
}

// Info describes an objective: its name, its search space (one Param per
// dimension of x, in order), whether it minimizes and, for benchmarks, its
// known optimum.
type Info struct {
	Name     string
	Params   []Param
	Minimize bool     // the host negates; records keep native values
	Optimum  *float64 // known optimum f* in native units (benchmarks), else nil
}

// Dim returns the number of parameters, the length of x in Evaluate.
func (i Info) Dim() int { return len(i.Params) }

// Validate reports the first problem with the space declared by i (see
// Space.Validate), prefixed with the objective's name.
func (i Info) Validate() error {
	if err := Space(i.Params).Validate(); err != nil {
		if i.Name != "" {
			return fmt.Errorf("objective %q: %w", i.Name, err)
		}
		return err
	}
	if i.Optimum != nil && (math.IsNaN(*i.Optimum) || math.IsInf(*i.Optimum, 0)) {
		return fmt.Errorf("objective %q: %w: optimum is %v", i.Name, ErrBadSpace, *i.Optimum)
	}
	return nil
}

// Space is a search space: the Params of an Info, in order.
type Space []Param

// ErrBadSpace is wrapped by every error Space.Validate and Info.Validate
// return, so callers can test for a malformed space with errors.Is.
var ErrBadSpace = errors.New("malformed search space")

// Validate checks that the space has at least one parameter and that every
// parameter has a non-empty unique name, a known kind, finite bounds with
// Low < High, Low > 0 for LogFloat, and at least one integer in [Low, High]
// for Int. The error names the offending parameter and says what to fix.
func (s Space) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("%w: no parameters (declare at least one Param in Info.Params)", ErrBadSpace)
	}
	seen := make(map[string]bool, len(s))
	for i, p := range s {
		where := fmt.Sprintf("param %d (%q)", i, p.Name)
		switch {
		case strings.TrimSpace(p.Name) == "":
			return fmt.Errorf("%w: param %d has an empty name", ErrBadSpace, i)
		case seen[p.Name]:
			return fmt.Errorf("%w: %s: duplicate name", ErrBadSpace, where)
		case p.Kind != Float && p.Kind != Int && p.Kind != LogFloat:
			return fmt.Errorf("%w: %s: unknown kind %d (use sdk.Float, sdk.Int or sdk.LogFloat)", ErrBadSpace, where, int(p.Kind))
		case math.IsNaN(p.Low) || math.IsNaN(p.High) || math.IsInf(p.Low, 0) || math.IsInf(p.High, 0):
			return fmt.Errorf("%w: %s: bounds [%v, %v] must be finite", ErrBadSpace, where, p.Low, p.High)
		case p.Low >= p.High:
			return fmt.Errorf("%w: %s: Low %v must be less than High %v", ErrBadSpace, where, p.Low, p.High)
		case p.Kind == LogFloat && p.Low <= 0:
			return fmt.Errorf("%w: %s: a LogFloat needs Low > 0, got Low %v", ErrBadSpace, where, p.Low)
		case p.Kind == Int && math.Ceil(p.Low) > math.Floor(p.High):
			return fmt.Errorf("%w: %s: no integer lies in [%v, %v]", ErrBadSpace, where, p.Low, p.High)
		}
		seen[p.Name] = true
	}
	return nil
}

// Contains reports whether x has one finite coordinate per parameter, each
// within its parameter's bounds.
func (s Space) Contains(x []float64) bool {
	if len(x) != len(s) {
		return false
	}
	for i, p := range s {
		if math.IsNaN(x[i]) || x[i] < p.Low || x[i] > p.High {
			return false
		}
	}
	return true
}

// Result is one evaluation with optional metadata the host records with the
// trial (e.g. facerec's matched identity, cnn's training time).
type Result struct {
	Value float64
	Meta  map[string]string
}

// Observation is one completed evaluation: the point X and the observed
// value. Suggesters receive observations in native units with values as the
// objective returned them (see SuggestRequest); a Posterior reports them in
// the unit cube with standardized values (see Posterior).
type Observation struct {
	X     []float64
	Value float64
}
