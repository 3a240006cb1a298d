package host

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
)

// Fixed parameters (Options.Fixed, the Fix option of Ask, tesbo-host run
// --fix NAME=VALUE).
//
// A pinned parameter takes its given value in every point the study
// proposes: the initial design, the acquisition's batches and the
// space-filling fallback. The model is unchanged — it is fitted on the
// completed trials whatever their values of the pinned parameters (all
// of them, or a local model's share at scale) — and the acquisition is
// maximized over the free coordinates only (acq.State.Pinned: the inner
// optimizer never moves a pinned coordinate, and TES's trusted maximizers
// are the sample paths' maximizers over the pinned slice, so TES measures
// information about the maximizer there). The host then sets the pinned
// values on whatever a proposer returns (a plugin acquisition, a
// suggester, random search), so the guarantee does not rest on the
// proposer. The initial design is the same Latin hypercube as without
// pins, with the pinned coordinates replaced: its free coordinates are
// still a Latin hypercube.
//
// A local model (ModelLocal, or ModelAuto at scale) keeps the study's
// pinned coordinates whole in its region, which therefore holds the
// pinned slice (Study.wholeRange); the pins of a single Ask are searched
// at the region's edge when outside it (see inRegion). TES searches its
// trust region on the slice — around the evaluated point with the largest
// posterior mean once moved onto it, the pinned coordinates keeping their
// whole range — and the refined recommendation is the posterior mean's
// maximizer over the slice. A pinned point keeps the pinned value exactly
// in native units (the unit-cube round trip of a Float could move it by
// an ulp).

// pinning is a validated set of pinned parameters: per coordinate the
// native value and its unit-cube image, NaN for a free coordinate.
type pinning struct {
	x, u []float64
}

// pins validates fixed (native values by parameter name; a Categorical by
// its choice's index) against the space and returns its pinning, nil when
// fixed is empty.
func (s *Space) pins(fixed map[string]float64) (*pinning, error) {
	if len(fixed) == 0 {
		return nil, nil
	}
	p := &pinning{x: make([]float64, s.Dim()), u: make([]float64, s.Dim())}
	for i := range p.x {
		p.x[i], p.u[i] = math.NaN(), math.NaN()
	}
	names := make([]string, 0, len(fixed))
	for name := range fixed {
		names = append(names, name)
	}
	sort.Strings(names) // the first error is the same on every call
	for _, name := range names {
		i := s.index(name)
		if i < 0 {
			return nil, fmt.Errorf("fixed parameter %q: the objective has no parameter of that name (it has %v)", name, s.names)
		}
		v, par := fixed[name], s.params[i]
		if lo, hi := par.Bounds(); math.IsNaN(v) || v < lo || v > hi {
			return nil, fmt.Errorf("fixed parameter %s: %v is outside [%v, %v]", name, v, lo, hi)
		}
		if (par.Kind == sdk.Int || par.Kind == sdk.Categorical) && v != math.Round(v) {
			return nil, fmt.Errorf("fixed parameter %s: %v is not an integer", name, v)
		}
		p.x[i] = v
	}
	for _, name := range names {
		if j, off := s.pinnedOff(p, s.index(name)); off {
			return nil, fmt.Errorf("fixed parameter %s: no proposal would use it, since %s is fixed to %s, under which %s is inactive (sdk.Param.ActiveIf): drop one of the two",
				name, s.names[j], s.params[j].Choices[int(p.x[j])], name)
		}
	}
	u, err := s.ToUnit(s.fill(p.x))
	if err != nil { // unreachable: every value was checked above
		return nil, fmt.Errorf("fixed parameters: %w", err)
	}
	for i, v := range p.x {
		if !math.IsNaN(v) {
			p.u[i] = u[i]
		}
	}
	return p, nil
}

// pinnedOff reports whether the pins make parameter i inactive in every
// proposal: some ancestor on its chain of conditions (sdk.Param.ActiveIf)
// is pinned to a choice outside the condition of the link below it. It
// returns that ancestor's coordinate.
func (s *Space) pinnedOff(p *pinning, i int) (int, bool) {
	for c := i; s.params[c].ActiveIf != nil; {
		cond := s.params[c].ActiveIf
		j := s.index(cond.Parent)
		if v := p.x[j]; !math.IsNaN(v) && !slices.Contains(cond.Values, s.params[j].Choices[int(v)]) {
			return j, true
		}
		c = j
	}
	return -1, false
}

// fill returns x with every NaN coordinate at its parameter's lower bound
// (a point of the space, for ToUnit).
func (s *Space) fill(x []float64) []float64 {
	out := append([]float64(nil), x...)
	for i, v := range out {
		if math.IsNaN(v) {
			out[i], _ = s.params[i].Bounds()
		}
	}
	return out
}

// index returns the coordinate of the parameter called name, or -1.
func (s *Space) index(name string) int {
	for i, n := range s.names {
		if n == name {
			return i
		}
	}
	return -1
}

// merge returns p with the pins of q added (q's win); nil when both are.
func (p *pinning) merge(q *pinning) *pinning {
	switch {
	case q == nil:
		return p
	case p == nil:
		return q
	}
	out := &pinning{x: append([]float64(nil), p.x...), u: append([]float64(nil), p.u...)}
	for i, v := range q.x {
		if !math.IsNaN(v) {
			out.x[i], out.u[i] = v, q.u[i]
		}
	}
	return out
}

// unit returns the unit-cube pins (acq.State.Pinned), nil without pins.
func (p *pinning) unit() []float64 {
	if p == nil {
		return nil
	}
	return p.u
}

// inRegion returns the unit-cube pins in the coordinates of a local
// model's region (reg nil: the unit cube), clamped to it: a pin of one
// Ask outside the region of a study whose Options pin nothing is searched
// at the region's edge, and the host sets its exact value afterwards.
func (p *pinning) inRegion(reg *gp.Region) []float64 {
	u := p.unit()
	if u == nil || reg == nil {
		return u
	}
	out := make([]float64, len(u))
	reg.ToUnit(out, u)
	for i, v := range u {
		if math.IsNaN(v) {
			out[i] = math.NaN()
		} else {
			out[i] = clamp01(out[i])
		}
	}
	return out
}

// applyUnit sets the pinned coordinates of the unit-cube point u in place.
func (p *pinning) applyUnit(u []float64) {
	if p == nil {
		return
	}
	for i, v := range p.u {
		if !math.IsNaN(v) {
			u[i] = v
		}
	}
}

// applyNative sets the pinned coordinates of the native point x in place.
func (p *pinning) applyNative(x []float64) {
	if p == nil {
		return
	}
	for i, v := range p.x {
		if !math.IsNaN(v) {
			x[i] = v
		}
	}
}

// AskOption modifies one Ask call.
type AskOption func(*askConfig)

// askConfig is what the options of one Ask call set.
type askConfig struct {
	fixed map[string]float64
}

// Fix pins parameters in the points of one Ask call: every point the call
// proposes (design point or acquisition's) takes these values (native
// units by parameter name; a Categorical by its choice's index), on top of the study's Options.Fixed (Fix wins for a
// parameter pinned by both). The model still uses every trial. Enqueued
// points are returned as they were given. A Study driven by Ask/Tell is
// reproduced exactly only when each Ask gets the same options again.
func Fix(values map[string]float64) AskOption {
	return func(c *askConfig) {
		if c.fixed == nil {
			c.fixed = map[string]float64{}
		}
		for k, v := range values {
			c.fixed[k] = v
		}
	}
}

// askPins returns the pins of one Ask call: the study's, merged with the
// call's options.
func (s *Study) askPins(opts []AskOption) (*pinning, error) {
	var c askConfig
	for _, o := range opts {
		o(&c)
	}
	p, err := s.space.pins(c.fixed)
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	return s.pins.merge(p), nil
}

// fixedFromText resolves pins given as text (NAME → VALUE, tesbo-host run
// --fix) against the objective's parameters into Options.Fixed form,
// added to fixed: a number in native units, a Categorical by its choice's
// name. The values themselves (bounds, integers) are checked with the
// space (Space.pins).
func fixedFromText(params []sdk.Param, text map[string]string, fixed map[string]float64) (map[string]float64, error) {
	if len(text) == 0 {
		return fixed, nil
	}
	out := map[string]float64{}
	for k, v := range fixed {
		out[k] = v
	}
	for name, val := range text {
		i := slices.IndexFunc(params, func(p sdk.Param) bool { return p.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("bad --fix %s=%s: the objective has no parameter %q", name, val, name)
		}
		if p := params[i]; p.Kind == sdk.Categorical {
			c := slices.Index(p.Choices, val)
			if c < 0 {
				return nil, fmt.Errorf("bad --fix %s=%s: not one of %s's choices %v", name, val, name, p.Choices)
			}
			out[name] = float64(c)
			continue
		}
		x, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("bad --fix %s=%s: want a finite number", name, val)
		}
		out[name] = x
	}
	return out, nil
}

// freeCoords counts the coordinates p leaves to the acquisition: not
// pinned, and not inactive because of what is pinned.
func (s *Space) freeCoords(p *pinning) int {
	n := 0
	for i := range p.x {
		if !math.IsNaN(p.x[i]) {
			continue
		}
		if _, off := s.pinnedOff(p, i); !off {
			n++
		}
	}
	return n
}
