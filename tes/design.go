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

// designCandidates is the number of uniform candidates scored for each
// space-filling point.
const designCandidates = 1000

// design returns the space-filling points a batch of q opens with (nil
// when the study already has its design): as many as the evaluated and
// pending points fall short of s.DesignPoints (d + 1 by default), at most q.
// Evaluated counts the study's successful evaluations, so failed ones do
// not make up the design. Under a local model the GP's inputs are region
// coordinates: a local model smaller than d + 1 trials in a study that
// is, too, gets its design inside the region.
func (s deliverSettings) design(st *acq.State, q int) *mat.Dense {
	d := st.GP.Dim()
	want := s.DesignPoints
	if want == 0 {
		want = d + 1
	}
	have := max(st.Evaluated, st.GP.N()) + rowsOf(st.Pending)
	if want <= have {
		return nil
	}
	return spaceFilling(st.Rand, min(q, want-have), st.GP.X(), st.Pending, acq.CategoriesOf(st.GP))
}

// spaceFilling returns k points of the unit cube chosen greedily, each the
// one of designCandidates uniform candidates farthest from the rows of X,
// of pending and of the points chosen before it: a maximin design that
// keeps away from what is known. The distance is Euclidean, except that a
// categorical coordinate (cats[j] = n > 0 choices, binned as the host bins
// it: choice ⌊u·n⌋) adds 1 when the choices differ and 0 when they agree —
// its choices are not ordered, and a Euclidean maximin would favour the
// first and last. Int coordinates are binned by the host like any
// proposal's.
func spaceFilling(rng *rand.Rand, k int, X, pending *mat.Dense, cats []int) *mat.Dense {
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
