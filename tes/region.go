package tes

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// The trust region of Deliver. TES learns about the global maximizer x*:
// after a handful of evaluations in 6 dimensions its trusted maximizers lie
// anywhere in the cube, and its queries sat 0.3–0.7 (unit-cube distance)
// from the best trial where UCB's sat 0.1–0.3 — and UCB found better trials.
// Deliver therefore searches TES's queries in a box around the best trial,
// shaped as TuRBO's (Eriksson et al., NeurIPS 2019): side L·w_j along
// coordinate j, with w the length-scales over their geometric mean, so the
// box is longer where the objective varies slowly. Paths, trusted
// maximizers and α all come from the same posterior seen through the box
// (gp.GP.InRegion), so inside it TES is unchanged: it learns about the
// maximizer of f over the box. x̄ stays the maximizer of μ over the whole
// cube, which is how a better mode elsewhere, once the model sees one, is
// still evaluated. The price is that a first good mode found from very
// few initial points is climbed rather than questioned: on Hartmann-3 from
// 2 points, 9 of 30 runs stayed on its second-best mode against 1 without
// the box (docs/results lists the escape rules tried; none kept the gains
// elsewhere), and 4 of 30 once Deliver opened with d + 1 space-filling
// points (design.go).
//
// On a conditional space the box is over the unconditional continuous
// coordinates only: the categorical ones (the conditions' parents) and the
// conditional ones keep their whole range, so the canonical map
// (acq.State.Canonical), which reads the parents and writes defaults on
// inactive coordinates, means the same in the box's coordinates as in the
// cube's. On cond/hartmann (six shared coordinates, two conditional ones)
// the box took the runs that end within 1e-3 of f* from 0 of 30 to 9
// (docs/results/tuning).

// trustRegionOver returns the box of side L (in normalized length-scales)
// around the point c (Deliver passes the evaluated point with the largest
// posterior mean, moved onto the pinned slice: acq.BestMeanOnSlice).
// Categorical coordinates and those marked whole (wholeCoords: pinned and
// conditional ones) keep their whole range, so a pin, and a conditional
// space's canonical map, read the same in the box's coordinates; along an
// Int coordinate (intStep[j] > 0, acq.State.IntStep) the box reaches at
// least 1.5 bins each way, so that the neighbouring integers' bins are
// inside it. It returns ok = false when the box is the whole cube.
// Only the first nx coordinates are boxed: the others keep their whole
// range and take no part in the length-scales' normalization (a
// multi-fidelity study's fidelity). Nor do the categorical and whole
// coordinates: the box's volume is shared among the coordinates it
// searches.
func trustRegionOver(g *gp.GP, c []float64, L float64, intStep []float64, whole []bool, nx int) (reg gp.Region, ok bool) {
	cats := acq.CategoriesOf(g)
	cont := func(j int) bool {
		return j < nx && (cats == nil || cats[j] == 0) && (j >= len(whole) || !whole[j])
	}
	ell := lengthscales(g.Kernel())
	var logMean float64
	var nc int
	for j, l := range ell {
		if cont(j) {
			logMean += math.Log(l)
			nc++
		}
	}
	reg = gp.Region{Lo: make([]float64, len(c)), Width: make([]float64, len(c))}
	for j := range c {
		reg.Width[j] = 1
		if !cont(j) {
			continue
		}
		half := 0.5 * math.Max(L*ell[j]/math.Exp(logMean/float64(nc)), gp.MinRegionWidth)
		if intStep != nil {
			half = math.Max(half, gp.IntSpan*intStep[j])
		}
		lo, hi := math.Max(0, c[j]-half), math.Min(1, c[j]+half)
		reg.Lo[j], reg.Width[j] = lo, hi-lo
	}
	return reg, !reg.Whole()
}

// queryBox is the trust region TES's queries of st search: the box of
// side L around centre (1×d) over the first nx coordinates
// (trustRegionOver), pinned and conditional ones whole (wholeCoords). It
// returns ok = false for the whole cube: when L ≤ 0, when the box covers
// it, and when st has a canonical map without saying which coordinates
// that map writes (State.Conditional), since no box could then be known to
// hold its defaults.
func queryBox(st *acq.State, L float64, centre *mat.Dense, nx int) (reg gp.Region, ok bool) {
	if L <= 0 || st.Canonical != nil && st.Conditional == nil {
		return gp.Region{}, false
	}
	return trustRegionOver(st.GP, centre.RawRowView(0), L, st.IntStep, wholeCoords(st), nx)
}

// wholeCoords marks the coordinates a trust region keeps whole besides the
// categorical ones: the pinned (acq.State.Pinned not NaN) and the
// conditional ones (acq.State.Conditional). A conditional coordinate is
// searched over its whole range because the canonical map writes its
// default there, which a box around another branch's value would not
// hold. Nil when there are none.
func wholeCoords(st *acq.State) []bool {
	if st.Pinned == nil && st.Conditional == nil {
		return nil
	}
	out := make([]bool, st.Dim())
	for j := range out {
		out[j] = j < len(st.Pinned) && !math.IsNaN(st.Pinned[j]) || j < len(st.Conditional) && st.Conditional[j]
	}
	return out
}

// inRegion returns st seen through reg: the same posterior with inputs in
// region coordinates, pending points, the success probability and the Int
// bin widths mapped likewise.
func inRegion(st *acq.State, reg gp.Region) (*acq.State, error) {
	g, err := st.GP.InRegion(reg)
	if err != nil {
		return nil, err
	}
	out := *st
	out.GP = g
	out.Pending = reg.RowsToUnit(st.Pending, false)
	out.IntStep = reg.StepsToUnit(st.IntStep)
	if st.Feasible != nil {
		out.Feasible = regionFeasible{f: st.Feasible, reg: reg}
	}
	return &out, nil
}

// regionFeasible is a success probability learnt on the unit cube, read in
// a region's coordinates.
type regionFeasible struct {
	f   acq.Feasible
	reg gp.Region
}

// LogProb implements acq.Feasible: log p(x(u)), its gradient by the chain
// rule ∂/∂u_j = Width_j ∂/∂x_j.
func (r regionFeasible) LogProb(u, grad []float64) float64 {
	x := make([]float64, len(u))
	r.reg.FromUnit(x, u)
	v := r.f.LogProb(x, grad)
	for j := range grad {
		grad[j] *= r.reg.Width[j]
	}
	return v
}
