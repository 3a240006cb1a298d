package classify

import (
	"slices"

	"gonum.org/v1/gonum/mat"
)

// subset returns at most m of the labelled points (rows of X, ok), in their
// original order, chosen deterministically so that the classifier still
// sees where evaluations fail and where they stop failing:
//
//   - the failures, up to m/2 of them (evenly spaced in trial order when
//     there are more);
//   - for each kept failure its nearest success (Euclidean), which together
//     trace the boundary of the failing region;
//   - successes evenly spaced in trial order until m points are kept, so
//     that every explored region keeps some of its successes (far from
//     every kept point p(success) returns to ½).
func subset(X *mat.Dense, ok []bool, m int) (*mat.Dense, []bool) {
	var fail, succ []int
	for i, v := range ok {
		if v {
			succ = append(succ, i)
		} else {
			fail = append(fail, i)
		}
	}
	keep := spaced(fail, min(len(fail), m/2))
	chosen := make(map[int]bool, m)
	for _, i := range keep {
		chosen[i] = true
	}
	var near []int
	for _, f := range keep {
		if j, found := nearest(X, f, succ); found && !chosen[j] {
			chosen[j] = true
			near = append(near, j)
		}
	}
	keep = append(keep, near...) // at most one per kept failure, so within m
	var rest []int
	for _, i := range succ {
		if !chosen[i] {
			rest = append(rest, i)
		}
	}
	keep = append(keep, spaced(rest, min(len(rest), m-len(keep)))...)
	slices.Sort(keep)
	_, d := X.Dims()
	sub := mat.NewDense(len(keep), d, nil)
	subOK := make([]bool, len(keep))
	for k, i := range keep {
		sub.SetRow(k, X.RawRowView(i))
		subOK[k] = ok[i]
	}
	return sub, subOK
}

// spaced returns k of the indices idx, evenly spaced (all of them when
// k ≥ len(idx)).
func spaced(idx []int, k int) []int {
	if k >= len(idx) {
		return slices.Clone(idx)
	}
	out := make([]int, k)
	for i := range out {
		out[i] = idx[i*len(idx)/k]
	}
	return out
}

// nearest returns the row among cands nearest to row f of X.
func nearest(X *mat.Dense, f int, cands []int) (int, bool) {
	best, bestD := -1, 0.0
	x := X.RawRowView(f)
	for _, j := range cands {
		d2 := 0.0
		for c, v := range X.RawRowView(j) {
			d2 += (v - x[c]) * (v - x[c])
		}
		if best < 0 || d2 < bestD {
			best, bestD = j, d2
		}
	}
	return best, best >= 0
}
