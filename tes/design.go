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
func (s DeliverSettings) design(st *acq.State, q int) *mat.Dense {
	d := st.GP.Dim()
	want := s.DesignPoints
	if want == 0 {
		want = d + 1
	}
	have := max(st.Evaluated, st.GP.N()) + rowsOf(st.Pending)
	if want <= have {
		return nil
	}
	return spaceFilling(st.Rand, min(q, want-have), st.GP.X(), st.Pending)
}

// spaceFilling returns k points of the unit cube chosen greedily, each the
// one of designCandidates uniform candidates farthest (Euclidean) from the
// rows of X, of pending and of the points chosen before it: a maximin
// design that keeps away from what is known. Int and categorical
// coordinates are binned by the host like any proposal's.
func spaceFilling(rng *rand.Rand, k int, X, pending *mat.Dense) *mat.Dense {
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
			if dist := nearestSq(c, known); dist > best {
				best = dist
				out.SetRow(r, c)
			}
		}
		known = append(known, out.RawRowView(r))
	}
	return out
}

// nearestSq returns the squared Euclidean distance from x to the nearest
// of pts (+Inf when there are none).
func nearestSq(x []float64, pts [][]float64) float64 {
	m := math.Inf(1)
	for _, p := range pts {
		s := 0.0
		for j, v := range x {
			s += (v - p[j]) * (v - p[j])
		}
		m = math.Min(m, s)
	}
	return m
}
