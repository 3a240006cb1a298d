package sdk

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// High (Low ≥ 2.2250738585072014e-308, the smallest normal float64),
	// e.g. a learning rate.
	LogFloat
	// Categorical is an unordered choice among Param.Choices. Evaluate
	// receives the chosen index as an exact float64 in 0, 1, …,
	// len(Choices)−1 (Values gives the name); Low and High are left unset.
	Categorical
)

// String returns "float", "int", "logfloat", "categorical" or "ParamKind(n)".
func (k ParamKind) String() string {
	switch k {
	case Float:
		return "float"
	case Int:
		return "int"
	case LogFloat:
		return "logfloat"
	case Categorical:
		return "categorical"
	}
	return fmt.Sprintf("ParamKind(%d)", int(k))
}

// Param is one dimension of an objective's search space.
type Param struct {
	Name      string
	Kind      ParamKind
	Low, High float64 // inclusive bounds in native units; unset for Categorical
	// Choices are the names of a Categorical's options, in index order.
	Choices []string `json:",omitempty"`
	// ActiveIf, when set, makes the parameter conditional: it exists only
	// when a Categorical declared before it takes one of the given
	// choices (see Condition). nil: always active.
	ActiveIf *Condition `json:",omitempty"`
}

// Bounds returns the inclusive range of the parameter's native values: Low
// and High, or 0 and len(Choices)−1 for a Categorical.
func (p Param) Bounds() (lo, hi float64) {
	if p.Kind == Categorical {
		return 0, float64(len(p.Choices) - 1)
	}
	return p.Low, p.High
}

// Format returns the native value v as text: the choice name for a
// Categorical (v rounded to an index; "?" when out of range), else v in Go's
// shortest 'g' form.
func (p Param) Format(v float64) string {
	if math.IsNaN(v) {
		return "" // an inactive parameter (Condition)
	}
	if p.Kind == Categorical {
		k := math.Round(v)
		if k >= 0 && k < float64(len(p.Choices)) {
			return p.Choices[int(k)]
		}
		return "?"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Info describes an objective: its name, its search space (one Param per
// dimension of x, in order), whether it minimizes and, for benchmarks, its
// known optimum.
type Info struct {
	Name     string
	Params   []Param
	Minimize bool     // the host negates; records keep native values
	Optimum  *float64 // known optimum f* in native units (benchmarks), else nil
	// InitialDesign is the size of the initial design the objective asks
	// for when the study sets none (tesbo-host run without --init). 0
	// leaves it to the host, which starts an objective of unknown cost and
	// noise with host.DefaultObjectiveInit (10) points. Cheap benchmark
	// functions declare 2, the TES paper's §5 design.
	InitialDesign int `json:",omitempty"`
	// MaxStep is the last step an evaluation reports through Report (the
	// number of epochs a training runs, say), 0 to MaxStepLimit; 0 when it
	// reports nothing or does not know. Pruners that need the full
	// resource (Hyperband) take it from here unless the study sets it.
	MaxStep int `json:",omitempty"`
	// Outputs, when set, declares that each evaluation returns several
	// named outputs (objectives and/or constraints; at most MaxOutputs),
	// returned by EvaluateOutputs (MultiOutput) in this order. Unset, the
	// objective returns one value from Evaluate, as before.
	Outputs []Output `json:",omitempty"`
	// RefPoint is the reference point of a study with several objective
	// outputs: one value per objective output, in native units and in
	// their order in Outputs; the hypervolume is measured from it. nil
	// lets the host derive one from the evaluated trials.
	RefPoint []float64 `json:",omitempty"`
}

// Dim returns the number of parameters, the length of x in Evaluate.
func (i Info) Dim() int { return len(i.Params) }

// Validate reports the first problem with the space declared by i (see
// Space.Validate), prefixed with the objective's name.
func (i Info) Validate() error {
	if err := checkName(i.Name); i.Name != "" && err != nil {
		return fmt.Errorf("%w: objective name %s: %w", ErrBadSpace, quoteName(i.Name), err)
	}
	if err := Space(i.Params).Validate(); err != nil {
		if i.Name != "" {
			return fmt.Errorf("objective %q: %w", i.Name, err)
		}
		return err
	}
	if i.Optimum != nil && (math.IsNaN(*i.Optimum) || math.IsInf(*i.Optimum, 0)) {
		return fmt.Errorf("objective %q: %w: optimum is %v", i.Name, ErrBadSpace, *i.Optimum)
	}
	if i.InitialDesign < 0 || i.InitialDesign > MaxInitialDesign {
		return fmt.Errorf("objective %q: %w: initial design of %d points, want 0 (the host's default) to %d", i.Name, ErrBadSpace, i.InitialDesign, MaxInitialDesign)
	}
	if i.MaxStep < 0 || i.MaxStep > MaxStepLimit {
		return fmt.Errorf("objective %q: %w: max step %d, want 0 (none) to %d", i.Name, ErrBadSpace, i.MaxStep, MaxStepLimit)
	}
	if err := i.validateOutputs(); err != nil {
		return fmt.Errorf("objective %q: %w", i.Name, err)
	}
	return nil
}

// MaxStepLimit bounds Info.MaxStep and the steps an evaluation reports.
const MaxStepLimit = 1_000_000

// MaxInitialDesign bounds Info.InitialDesign: the host fits a GP on every
// evaluation and refuses studies of more than 5000 trials.
const MaxInitialDesign = 5000

// Space is a search space: the Params of an Info, in order.
type Space []Param

// ErrBadSpace is wrapped by every error Space.Validate and Info.Validate
// return, so callers can test for a malformed space with errors.Is.
var ErrBadSpace = errors.New("malformed search space")

// minLogLow is the smallest LogFloat Low: the smallest normal float64.
// The log-scale map goes through log and exp, which are exact to an ulp
// or so on normal numbers but not below (exp(log(5e-324)) is 1.1e-308).
const minLogLow = 0x1p-1022

// Validate checks that the space has at least one parameter and that every
// parameter has a non-empty unique name (see MaxNameBytes), a known kind, finite bounds with
// Low < High, Low > 0 for LogFloat (at least the smallest normal float64,
// 2.2250738585072014e-308), and at least one integer in [Low, High]
// for Int. A Categorical needs at least one choice, non-empty unique choice
// names (see MaxNameBytes), and Low and High unset (or equal to its index range 0 and
// len(Choices)−1); only a Categorical may have Choices. The error names the
// offending parameter and says what to fix.
func (s Space) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("%w: no parameters (declare at least one Param in Info.Params)", ErrBadSpace)
	}
	seen := make(map[string]bool, len(s))
	for i, p := range s {
		where := fmt.Sprintf("param %d (%s)", i, quoteName(p.Name))
		switch {
		case strings.TrimSpace(p.Name) == "":
			return fmt.Errorf("%w: param %d has an empty name", ErrBadSpace, i)
		case checkName(p.Name) != nil:
			return fmt.Errorf("%w: %s: %w", ErrBadSpace, where, checkName(p.Name))
		case seen[p.Name]:
			return fmt.Errorf("%w: %s: duplicate name", ErrBadSpace, where)
		case p.Kind != Float && p.Kind != Int && p.Kind != LogFloat && p.Kind != Categorical:
			return fmt.Errorf("%w: %s: unknown kind %d (use sdk.Float, sdk.Int, sdk.LogFloat or sdk.Categorical)", ErrBadSpace, where, int(p.Kind))
		case p.Kind == Categorical:
			if err := validateChoices(p); err != nil {
				return fmt.Errorf("%w: %s: %w", ErrBadSpace, where, err)
			}
		case len(p.Choices) > 0:
			return fmt.Errorf("%w: %s: a %v parameter has no Choices (declare Kind: sdk.Categorical or drop Choices)", ErrBadSpace, where, p.Kind)
		case math.IsNaN(p.Low) || math.IsNaN(p.High) || math.IsInf(p.Low, 0) || math.IsInf(p.High, 0):
			return fmt.Errorf("%w: %s: bounds [%v, %v] must be finite", ErrBadSpace, where, p.Low, p.High)
		case p.Low >= p.High:
			return fmt.Errorf("%w: %s: Low %v must be less than High %v", ErrBadSpace, where, p.Low, p.High)
		case math.IsInf(p.High-p.Low, 0):
			// The unit-cube map divides by the width: an infinite one would
			// send every value to one end.
			return fmt.Errorf("%w: %s: bounds [%v, %v] are wider than a float64 holds (High − Low overflows): rescale the parameter", ErrBadSpace, where, p.Low, p.High)
		case p.Kind == LogFloat && p.Low <= 0:
			return fmt.Errorf("%w: %s: a LogFloat needs Low > 0, got Low %v", ErrBadSpace, where, p.Low)
		case p.Kind == LogFloat && p.Low < minLogLow:
			return fmt.Errorf("%w: %s: a LogFloat needs Low ≥ %v (the smallest normal float64: below it exp(log(x)) is not x), got Low %v; rescale the parameter", ErrBadSpace, where, minLogLow, p.Low)
		case p.Kind == Int && math.Ceil(p.Low) > math.Floor(p.High):
			return fmt.Errorf("%w: %s: no integer lies in [%v, %v]", ErrBadSpace, where, p.Low, p.High)
		}
		if err := s.checkCondition(i); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadSpace, where, err)
		}
		seen[p.Name] = true
	}
	return nil
}

// MaxNameBytes bounds the names an objective declares: its own, its
// parameters' and its choices'. Names are shown in tables, pages, logs and
// CSV headers, so they must also be printable: valid UTF-8 without
// control characters (C0 including tab and newline, DEL, C1), which could
// drive the terminal that shows them.
const MaxNameBytes = 256

// checkName reports what makes name unfit to show (see MaxNameBytes).
func checkName(name string) error {
	switch {
	case len(name) > MaxNameBytes:
		return fmt.Errorf("name of %d bytes, at most %d are allowed", len(name), MaxNameBytes)
	case !utf8.ValidString(name):
		return errors.New("name is not valid UTF-8")
	case strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }):
		return errors.New("name holds a control character (use printable text)")
	}
	return nil
}

// quoteName quotes name for an error message, cut to its first 40 bytes:
// the name being refused may be megabytes long.
func quoteName(name string) string {
	if len(name) <= 40 {
		return strconv.Quote(name)
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return strconv.Quote(name[:cut]) + "…"
}

// MaxChoices bounds len(Param.Choices).
const MaxChoices = 1 << 16

// validateChoices checks a Categorical's Choices and unset bounds.
func validateChoices(p Param) error {
	n := len(p.Choices)
	switch {
	case n == 0:
		return errors.New("a Categorical needs at least one choice in Choices")
	case n > MaxChoices:
		return fmt.Errorf("%d choices, at most %d are allowed", n, MaxChoices)
	case !(p.Low == 0 && (p.High == 0 || p.High == float64(n-1))):
		return fmt.Errorf("a Categorical has Low %v and High %v set (its values are the indices of Choices; leave Low and High unset)", p.Low, p.High)
	}
	seen := make(map[string]bool, n)
	for k, c := range p.Choices {
		switch {
		case strings.TrimSpace(c) == "":
			return fmt.Errorf("choice %d is empty (name every choice)", k)
		case checkName(c) != nil:
			return fmt.Errorf("choice %d (%s): %w", k, quoteName(c), checkName(c))
		case seen[c]:
			return fmt.Errorf("duplicate choice %q (choices must be distinct)", c)
		}
		seen[c] = true
	}
	return nil
}

// Contains reports whether x has one finite coordinate per parameter, each
// within its parameter's bounds (an exact index for a Categorical); an
// inactive parameter of a conditional space (Condition) may hold anything.
func (s Space) Contains(x []float64) bool {
	if len(x) != len(s) {
		return false
	}
	act := s.Active(x)
	for i, p := range s {
		if !act[i] { // an inactive parameter of a conditional space: any value
			continue
		}
		lo, hi := p.Bounds()
		if math.IsNaN(x[i]) || x[i] < lo || x[i] > hi {
			return false
		}
		if p.Kind == Categorical && x[i] != math.Trunc(x[i]) {
			return false
		}
	}
	return true
}

// Result is one evaluation with optional metadata the host records with the
// trial (e.g. facerec's matched identity, cnn's training time). Metadata is
// for short values: a trial keeps at most 64 entries and 64 KiB of them
// (keys in order), keys must be non-empty printable text of at most 128
// bytes, and control characters in values are escaped; the trial's
// "meta_dropped" counts what was left out (host.MaxMetaKeys, MaxMetaBytes).
type Result struct {
	Value float64
	Meta  map[string]string
	// Outputs are the values of an objective with Info.Outputs, one per
	// declared output in order (native units); Value is then unused.
	Outputs []float64 `json:",omitempty"`
}

// Observation is one completed evaluation: the point X and the observed
// value. Suggesters receive observations in native units with values as the
// objective returned them (see SuggestRequest); a Posterior reports them in
// the unit cube with standardized values (see Posterior).
type Observation struct {
	X     []float64
	Value float64
	// Outputs are the observed outputs of an objective with Info.Outputs,
	// one per declared output in order.
	Outputs []float64 `json:",omitempty"`
}
