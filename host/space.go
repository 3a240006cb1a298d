package host

import (
	"fmt"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

// Space maps an objective's parameters between native units and the unit
// cube [0,1]^d the GP and the acquisitions work in:
//
//   - Float:    x = Low + u·(High − Low)
//   - LogFloat: x = exp(log Low + u·(log High − log Low))  (uniform in log x)
//   - Int:      the n = ⌊High⌋ − ⌈Low⌉ + 1 integers split [0,1] into n equal
//     bins; u in bin k maps to ⌈Low⌉ + k, and an integer maps back to its
//     bin's centre (k + ½)/n.
//   - Categorical: one coordinate, binned like an Int over the indices
//     0..n−1 of its n Choices. The bin order carries no meaning: the GP's
//     kernel compares categorical coordinates only for equality of their
//     bins (gp.Mixed) and the acquisition optimizer moves them between
//     bins, never along the axis.
//
// Every integer thus owns the same share of the cube. The host stores the
// snapped point (Int coordinates moved to their bin centre) as the trial's
// unit-cube point, so the GP sees exactly the point that was evaluated, and
// two proposals that round to the same integers are recognised as duplicates.
type Space struct {
	params []sdk.Param
	names  []string    // the parameters' names (Trial.Names)
	lo, n  []float64   // Int: ⌈Low⌉ and the number of integers; unused otherwise
	cond   *conditions // conditional parameters (conditional.go), nil when none
}

// NewSpace validates params (sdk.Space.Validate) and returns their transform.
func NewSpace(params []sdk.Param) (*Space, error) {
	if err := sdk.Space(params).Validate(); err != nil {
		return nil, err
	}
	s := &Space{params: append([]sdk.Param(nil), params...)}
	s.lo = make([]float64, len(params))
	s.n = make([]float64, len(params))
	for i, p := range params {
		s.names = append(s.names, p.Name)
		switch p.Kind {
		case sdk.Int:
			s.lo[i] = math.Ceil(p.Low)
			s.n[i] = math.Floor(p.High) - s.lo[i] + 1
		case sdk.Categorical:
			s.n[i] = float64(len(p.Choices))
		}
	}
	s.cond = newConditions(params, s.n)
	return s, nil
}

// Dim is the number of parameters d.
func (s *Space) Dim() int { return len(s.params) }

// Params returns a copy of the parameters.
func (s *Space) Params() []sdk.Param { return append([]sdk.Param(nil), s.params...) }

func clamp01(u float64) float64 {
	if !(u > 0) { // also maps NaN to 0
		return 0
	}
	if u > 1 {
		return 1
	}
	return u
}

// ToNative maps a unit-cube point (coordinates clamped to [0,1]) to native
// units, rounding Int parameters; an inactive parameter of a conditional
// space is NaN.
func (s *Space) ToNative(u []float64) []float64 {
	x := make([]float64, len(s.params))
	for i := range s.params {
		x[i] = s.NativeCoord(i, u[i])
	}
	if s.cond != nil {
		for i, a := range s.activeUnit(u) {
			if !a {
				x[i] = math.NaN()
			}
		}
	}
	return x
}

// NativeCoord maps coordinate i's unit-cube value (clamped to [0,1]) to
// native units, as ToNative does, but whatever the conditions say of the
// point it belongs to (ToNative makes an inactive parameter NaN): an axis
// along one parameter.
func (s *Space) NativeCoord(i int, u float64) float64 {
	p, ui := s.params[i], clamp01(u)
	switch p.Kind {
	case sdk.Int, sdk.Categorical:
		k := math.Floor(ui * s.n[i])
		if k > s.n[i]-1 {
			k = s.n[i] - 1
		}
		// The clamp matters only where integers are not exactly
		// representable (|x| > 2⁵³), where lo + k can round past High.
		_, hi := p.Bounds() // a Categorical's High is unset
		return math.Min(s.lo[i]+k, math.Floor(hi))
	case sdk.LogFloat:
		ll, lh := math.Log(p.Low), math.Log(p.High)
		return math.Min(math.Max(math.Exp(ll+ui*(lh-ll)), p.Low), p.High)
	}
	return math.Min(math.Max(p.Low+ui*(p.High-p.Low), p.Low), p.High)
}

// ToUnit maps a native point into the unit cube (Int coordinates to their
// bin centres; an inactive parameter of a conditional space, whatever its
// value, to its default). It errors when x has the wrong length, a non-finite or
// out-of-bounds coordinate, or a non-integer value for an Int parameter.
func (s *Space) ToUnit(x []float64) ([]float64, error) {
	if len(x) != len(s.params) {
		return nil, fmt.Errorf("point has %d coordinates, the space has %d parameters", len(x), len(s.params))
	}
	u := make([]float64, len(x))
	var act []bool
	if s.cond != nil {
		act = sdk.Space(s.params).Active(x)
	}
	for i, p := range s.params {
		v := x[i]
		if act != nil && !act[i] {
			u[i] = s.cond.def[i] // inactive: whatever x holds there
			continue
		}
		if lo, hi := p.Bounds(); math.IsNaN(v) || math.IsInf(v, 0) || v < lo || v > hi {
			return nil, fmt.Errorf("parameter %s: %v is outside [%v, %v]", p.Name, v, lo, hi)
		}
		switch p.Kind {
		case sdk.Int, sdk.Categorical:
			if v != math.Round(v) {
				return nil, fmt.Errorf("parameter %s: %v is not an integer", p.Name, v)
			}
			u[i] = (v - s.lo[i] + 0.5) / s.n[i]
		case sdk.LogFloat:
			ll, lh := math.Log(p.Low), math.Log(p.High)
			u[i] = clamp01((math.Log(v) - ll) / (lh - ll))
		default:
			u[i] = clamp01((v - p.Low) / (p.High - p.Low))
		}
	}
	return u, nil
}

// Snap returns u clamped to the cube with every Int and Categorical
// coordinate moved to the centre of its bin and every inactive coordinate
// of a conditional space at its default: the unit-cube image of the
// native point u maps to.
func (s *Space) Snap(u []float64) []float64 {
	out := make([]float64, len(u))
	for i, p := range s.params {
		ui := clamp01(u[i])
		if p.Kind == sdk.Int || p.Kind == sdk.Categorical {
			k := math.Floor(ui * s.n[i])
			if k > s.n[i]-1 {
				k = s.n[i] - 1
			}
			ui = (k + 0.5) / s.n[i]
		}
		out[i] = ui
	}
	s.canonical(out)
	return out
}

// Cardinality returns the number of distinct points of a space whose
// parameters are all Int or Categorical (saturating at math.MaxInt64 as a
// float), and finite=false when any parameter is continuous.
func (s *Space) Cardinality() (n float64, finite bool) {
	n = 1
	for i, p := range s.params {
		if p.Kind != sdk.Int && p.Kind != sdk.Categorical {
			return math.Inf(1), false
		}
		n *= s.n[i]
	}
	return math.Min(n, math.MaxInt64), true
}

// intSteps returns, per coordinate, the width 1/k of one value's bin of
// an Int parameter with k values and 0 for every other kind; nil when the
// space has no Int (acq.State.IntStep).
func (s *Space) intSteps() []float64 {
	return perKind(s, sdk.Int, func(i int) float64 { return 1 / s.n[i] })
}

// Categories returns, per coordinate, the number of choices of a
// Categorical parameter and 0 for every other kind; nil when the space has
// no Categorical (the GP's kernel and the acquisition optimizer then treat
// the space as continuous, exactly as before categoricals existed).
func (s *Space) Categories() []int {
	return perKind(s, sdk.Categorical, func(i int) int { return int(s.n[i]) })
}

// perKind returns value(i) for every coordinate i whose parameter is of
// the given kind and zero for the others; nil when there is none.
func perKind[T int | float64](s *Space, kind sdk.ParamKind, value func(i int) T) []T {
	var out []T
	for i, p := range s.params {
		if p.Kind == kind {
			if out == nil {
				out = make([]T, len(s.params))
			}
			out[i] = value(i)
		}
	}
	return out
}

// checkTrials refuses stored trials whose points cannot be this space's:
// a native or unit-cube point of another length, a unit-cube coordinate
// outside [0, 1], or NaN (an inactive coordinate) for a parameter that is
// always active. Such a row is a corrupt or hand-edited database, which
// would otherwise panic in the GP or be fitted silently.
func (s *Space) checkTrials(ts []Trial) error {
	d := s.Dim()
	for _, t := range ts {
		if len(t.X) != d || len(t.U) != d {
			return fmt.Errorf("%w: trial %d has %d native and %d unit-cube coordinates, the study's space %d", ErrCorrupt, t.ID, len(t.X), len(t.U), d)
		}
		for j, u := range t.U {
			if !(u >= 0 && u <= 1) && !math.IsNaN(u) {
				return fmt.Errorf("%w: trial %d's unit-cube coordinate %d is %v, outside [0, 1]", ErrCorrupt, t.ID, j, u)
			}
			if (math.IsNaN(u) || math.IsNaN(t.X[j])) && s.params[j].ActiveIf == nil {
				return fmt.Errorf("%w: trial %d has no value for %s, which is always active", ErrCorrupt, t.ID, s.params[j].Name)
			}
		}
	}
	return nil
}
