package pareto

import (
	"cmp"
	"math"
	"slices"
)

// wfg returns the hypervolume of pts above ref, every point strictly above
// ref (m = len(ref) ≥ 3; hv calls it from 4), by the WFG algorithm (While, Bradstreet and Barone
// 2012, "A fast way of calculating exact hypervolumes"). Sorted by the last
// objective in increasing order, p_1, …, p_n, the volume is the sum of each
// point's exclusive part against the points after it:
//
//	HV(P) = Σ_k excl(p_k; {p_{k+1}, …, p_n}),
//	excl(p; R) = Π_j (p_j − r_j) − HV({min(p, q) : q ∈ R}),
//
// the minimum taken per objective (the part of q's box inside p's). Every
// q after p has q_m ≥ p_m, so the limited points all sit at p_m in the last
// objective and their hypervolume is (p_m − r_m) times that of their first
// m − 1 objectives: each recursion drops one objective and keeps only the
// non-dominated limited points, which is what makes WFG fast where slicing
// (hso) recomputes every slice's base from scratch. Below 4 objectives the
// recursion hands over to hv's sweep and slicing, faster there. The worst
// case stays exponential in m, as for every exact method.
func wfg(pts [][]float64, ref []float64) float64 {
	m := len(ref)
	s := append([][]float64(nil), pts...)
	slices.SortStableFunc(s, func(a, b []float64) int { return cmp.Compare(a[m-1], b[m-1]) })
	total := 0.0
	for k, p := range s {
		total += (p[m-1] - ref[m-1]) * exclusive(p[:m-1], s[k+1:], ref[:m-1])
	}
	return total
}

// exclusive returns the volume of p's box [ref, p] (first len(ref)
// objectives) that no box of the points in rest covers:
// Π_j (p_j − r_j) − HV({min(p, q) : q ∈ rest}). Points of rest are read in
// their first len(ref) objectives and must be above ref there.
func exclusive(p []float64, rest [][]float64, ref []float64) float64 {
	m := len(ref)
	box := 1.0
	for j := 0; j < m; j++ {
		box *= p[j] - ref[j]
	}
	if len(rest) == 0 {
		return box
	}
	limited := make([][]float64, len(rest))
	flat := make([]float64, len(rest)*m)
	for i, q := range rest {
		l := flat[i*m : (i+1)*m : (i+1)*m]
		for j := range l {
			l[j] = math.Min(p[j], q[j])
		}
		limited[i] = l
	}
	if len(limited) <= 64 {
		limited = keepNondominated(limited)
	} else {
		limited = nondominated(limited)
	}
	if len(limited) == 1 {
		in := 1.0
		for j, v := range limited[0] {
			in *= v - ref[j]
		}
		return box - in
	}
	return box - hv(limited, ref)
}

// Contribution returns the hypervolume that p adds to front above ref,
// HV(front ∪ {p}; ref) − HV(front; ref) ≥ 0, as p's exclusive volume:
// Π_j (p_j − r_j) less the hypervolume of the front's points limited to
// p's box (see wfg). It costs one hypervolume of at most |front| points,
// against two for the difference of hypervolumes. front may hold dominated points
// and points not above ref; it panics when a length differs from ref's.
func Contribution(front [][]float64, p, ref []float64) float64 {
	m := len(ref)
	if len(p) != m {
		panic("pareto: point and reference point lengths differ")
	}
	if m == 0 || !above(p, ref) {
		return 0
	}
	rest := aboveRef(front, ref)
	if m == 1 {
		best := ref[0]
		for _, q := range rest {
			best = math.Max(best, q[0])
		}
		return math.Max(p[0]-best, 0)
	}
	return math.Max(exclusive(p, rest, ref), 0)
}

// keepNondominated returns what nondominated does (the distinct
// non-dominated points of pts, in their order, of equal points the first)
// by comparing every pair: O(n²·m) but without sorting or allocating per
// point, faster for the small limited sets of exclusive (up to 64 points),
// which WFG filters by the thousand.
func keepNondominated(pts [][]float64) [][]float64 {
	out := make([][]float64, 0, len(pts))
	for i, p := range pts {
		keep := true
		for j, q := range pts {
			if j != i && (Dominates(q, p) || (j < i && equal(q, p))) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, p)
		}
	}
	return out
}
