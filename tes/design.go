package tes

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// The space-filling opening of Deliver. From fewer than d + 1 points a GP
// cannot tell one direction's length-scale from another's, and the trust
// region (region.go) is placed around the better of a handful of random
// points: whichever basin that point lies in is climbed, and x̄ never
// leaves it because nothing was observed elsewhere. On Hartmann-3 from
// BoTorch's 2 initial points this left 9 of 30 runs on the second-best
// mode. Deliver therefore completes the design to d + 1 points before TES
// and x̄ take over: 2 more points on Hartmann-3 left 4 of 30 there
// (docs/results, seventh round). More points did not help (2d: 4 of 30,
// 3d: 7 of 30, each spent where TES would have climbed).
//
// Two limits keep the opening from costing elsewhere (docs/results/broad,
// eleventh round; chosen on the broad suite's tuning half, judged on its
// held-out half):
//   - at most maxDesignPoints points: in 8 dimensions d + 1 maximin
//     points are 7 evaluations at the cube's corners before any model
//     is used, and on the tuning half's 5- and 8-dimensional problems
//     fewer did better; Hartmann-3 keeps its d + 1 = 4;
//   - a continuous coordinate's points are drawn at least DesignMargin
//     (0.2) from its bounds: a maximin point among uniform candidates
//     otherwise goes to a corner or an edge, whose value says little
//     about the interior where optima usually lie. Categorical and
//     integer coordinates keep their whole range: their end values are
//     values like the others.

// maxDesignPoints caps the default opening design (Settings.DesignPoints
// zero): min(d + 1, maxDesignPoints) points.
const maxDesignPoints = 4

// designCandidates is the number of uniform candidates scored for each
// space-filling point.
const designCandidates = 1000

// design returns the space-filling points a batch of q opens with (nil
// when the study already has its design): as many as the evaluated and
// pending points fall short of s.DesignPoints (min(d + 1, 4) by default),
// at most q.
// Evaluated counts the study's successful evaluations, so failed ones do
// not make up the design. Under a local model the GP's inputs are region
// coordinates: a local model smaller than d + 1 trials in a study that
// is, too, gets its design inside the region.
func (s deliverSettings) design(st *acq.State, q int) *mat.Dense {
	d := st.GP.Dim()
	want := s.DesignPoints
	if want == 0 {
		want = min(d+1, maxDesignPoints)
	}
	have := max(st.Evaluated, st.GP.N()) + rowsOf(st.Pending)
	if want <= have {
		return nil
	}
	cats := acq.CategoriesOf(st.GP)
	return spaceFilling(st.Rand, min(q, want-have), st.GP.X(), st.Pending, cats, designMargins(d, s.DesignMargin, cats, st.IntStep))
}

// designMargins returns, per coordinate, how far spaceFilling keeps its
// points from the bounds: margin for a continuous coordinate, 0 for a
// categorical or integer one (whose first and last bins are values like
// the others), and nil when margin ≤ 0.
func designMargins(d int, margin float64, cats []int, intStep []float64) []float64 {
	if margin <= 0 {
		return nil
	}
	m := make([]float64, d)
	for j := range m {
		if (cats == nil || cats[j] == 0) && (intStep == nil || intStep[j] == 0) {
			m[j] = margin
		}
	}
	return m
}

// spaceFilling returns k points of the unit cube chosen greedily, each the
// one of designCandidates uniform candidates farthest from the rows of X,
// of pending and of the points chosen before it: a maximin design that
// keeps away from what is known. Coordinate j of a candidate is uniform
// on [margins[j], 1 − margins[j]] (margins may be nil: the whole cube).
// The distance is Euclidean, except that a categorical coordinate
// (cats[j] = n > 0 choices, binned as the host bins it: choice ⌊u·n⌋)
// adds 1 when the choices differ and 0 when they agree — its choices are
// not ordered, and a Euclidean maximin would favour the first and last.
// Int coordinates are binned by the host like any proposal's.
func spaceFilling(rng *rand.Rand, k int, X, pending *mat.Dense, cats []int, margins []float64) *mat.Dense {
	_, d := X.Dims()
	var known [][]float64
	for _, P := range []*mat.Dense{X, pending} {
		for i := range rowsOf(P) {
			known = append(known, P.RawRowView(i))
		}
	}
	out := mat.NewDense(k, d, nil)
	c := make([]float64, d)
	for r := range k {
		best := -1.0
		for range designCandidates {
			for j := range c {
				c[j] = rng.Float64()
				if margins != nil {
					c[j] = margins[j] + (1-2*margins[j])*c[j]
				}
			}
			if dist := nearestSq(c, known, cats); dist > best {
				best = dist
				out.SetRow(r, c)
			}
		}
		known = append(known, out.RawRowView(r))
	}
	return out
}

// nearestSq returns the squared distance of spaceFilling from x to the
// nearest of pts (+Inf when there are none); cats may be nil.
func nearestSq(x []float64, pts [][]float64, cats []int) float64 {
	m := math.Inf(1)
	for _, p := range pts {
		s := 0.0
		for j, v := range x {
			if cats != nil && cats[j] > 0 {
				if choice(v, cats[j]) != choice(p[j], cats[j]) {
					s++
				}
				continue
			}
			s += (v - p[j]) * (v - p[j])
		}
		m = math.Min(m, s)
	}
	return m
}

// choice is the index of the bin of n that u in [0,1] falls in.
func choice(u float64, n int) int {
	return min(int(u*float64(n)), n-1)
}
