// Package pareto holds the pure mathematics of several objectives that the
// host, the acquisitions and the benchmarks share: the Pareto front of a set
// of outcome vectors, the exact hypervolume it dominates, the reference point
// a study uses when the user gives none, and the hypervolume improvement of
// added points. Every objective is maximized. It depends on the standard
// library only, so any layer may import it.
package pareto

import (
	"math"
	"slices"
	"sort"
)

// Dominates reports whether a Pareto-dominates b under maximization:
// a_j ≥ b_j for every objective j and a_j > b_j for at least one.
func Dominates(a, b []float64) bool {
	strict := false
	for j := range a {
		if a[j] < b[j] {
			return false
		}
		if a[j] > b[j] {
			strict = true
		}
	}
	return strict
}

// Front returns the indices, in increasing order, of the rows of Y (n×m,
// maximization) that no other row dominates. Of several identical
// non-dominated rows only the first (lowest index) is kept, so the result is
// deterministic and has no duplicate vectors. Rows holding a NaN are never
// on the front.
//
// Rows are visited in decreasing lexicographic order (ties by index): a row
// can be dominated only by rows before it, and a row dominated by a dropped
// row is dominated by the kept row that dropped it, so each row is compared
// with the front kept so far only. Cost O(n log n · m + n·|front|·m).
func Front(Y [][]float64) []int {
	var idx []int
	for i, a := range Y {
		if !hasNaN(a) {
			idx = append(idx, i)
		}
	}
	sort.SliceStable(idx, func(a, b int) bool { return lexGreater(Y[idx[a]], Y[idx[b]]) })
	var out []int
	for _, i := range idx {
		keep := true
		for _, k := range out {
			if Dominates(Y[k], Y[i]) || equal(Y[k], Y[i]) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

// lexGreater reports whether a comes after b in lexicographic order.
func lexGreater(a, b []float64) bool {
	for j := range a {
		if a[j] != b[j] {
			return a[j] > b[j]
		}
	}
	return false
}

// Ranks returns each row's Pareto rank in Y (n×m, maximization), by
// non-dominated sorting: 0 for the rows no other row dominates, 1 for
// those only rank-0 rows dominate, and so on. Identical rows share a rank
// (Front keeps one of them); a row holding a NaN is never on a front and
// ranks after every other. Each rank costs one Front of the rows left.
func Ranks(Y [][]float64) []int {
	rank := make([]int, len(Y))
	left := make([]int, len(Y)) // indices into Y not yet ranked
	for i := range left {
		left[i] = i
	}
	for r := 0; len(left) > 0; r++ {
		sub := make([][]float64, len(left))
		for i, k := range left {
			sub[i] = Y[k]
		}
		front := Front(sub)
		if len(front) == 0 { // only rows with a NaN are left
			for _, k := range left {
				rank[k] = r
			}
			break
		}
		var next []int
		for i, k := range left {
			if slices.ContainsFunc(front, func(f int) bool { return slices.Equal(sub[f], sub[i]) }) {
				rank[k] = r
			} else {
				next = append(next, k)
			}
		}
		left = next
	}
	return rank
}

// Hypervolume returns the Lebesgue measure of the region that the points of
// front dominate and that dominates ref (maximization):
//
//	HV(P; r) = λ( ∪_{p∈P} [r, p] ).
//
// front may hold dominated points, duplicates and points not above ref (in
// some objective ≤ ref): they add nothing. The computation is exact: a sweep
// for 2 objectives (O(n log n)); for 3, slicing along the last objective
// (the HSO scheme of While et al. 2006), each slice's base a 2-objective
// hypervolume of the non-dominated points above it (O(n² log n)); for 4 and
// more, WFG (wfg.go), whose cost is exponential in m in the worst case:
// BenchmarkHypervolume's 40 points in 10 objectives took 30 ms, where
// slicing's n^(m−1) took 94 s. It panics when a point's length
// differs from ref's (a programming error).
func Hypervolume(front [][]float64, ref []float64) float64 {
	m := len(ref)
	pts := aboveRef(front, ref)
	if len(pts) == 0 || m == 0 {
		return 0
	}
	return hv(nondominated(pts), ref)
}

// HypervolumeImprovement returns HV(front ∪ added; ref) − HV(front; ref), the
// volume that the added points dominate and front does not (≥ 0). To ask it
// of one front many times, make the front's Base once.
func HypervolumeImprovement(front, added [][]float64, ref []float64) float64 {
	return NewBase(front, ref).Improvement(added)
}

// Base is a front whose hypervolume improvements are asked many times, as
// an acquisition's inner loop asks them of each Monte Carlo sample's front.
type Base struct {
	front [][]float64
	ref   []float64
	hv    float64 // HV(front; ref), computed once (fewer than 4 objectives)
}

// NewBase returns front's Base above ref. It keeps front, which must not
// change while the Base is used.
func NewBase(front [][]float64, ref []float64) Base {
	b := Base{front: front, ref: ref}
	if len(ref) < 4 {
		b.hv = Hypervolume(front, ref)
	}
	return b
}

// Improvement returns HV(front ∪ added; ref) − HV(front; ref) ≥ 0. Below 4
// objectives it is a difference of hypervolumes, the front's computed
// once; from 4 on the sum of each added point's Contribution to the front
// and the points added before it, each a hypervolume limited to one
// point's box, where the difference would cost the whole front's.
func (b Base) Improvement(added [][]float64) float64 {
	if len(b.ref) >= 4 {
		sum := 0.0
		acc := slices.Clip(b.front) // the first append copies: front stays as it is
		for i, p := range added {
			sum += Contribution(acc, p, b.ref)
			if i < len(added)-1 { // the last point is added to nothing
				acc = append(acc, p)
			}
		}
		return sum
	}
	all := append(append([][]float64(nil), b.front...), added...)
	return math.Max(Hypervolume(all, b.ref)-b.hv, 0)
}

// hv is the hypervolume of mutually non-dominated points strictly above ref:
// a sweep for 2 objectives, slicing for 3, WFG (wfg.go) for 4 and more,
// where slicing's cost grows as n^(m−1).
func hv(pts [][]float64, ref []float64) float64 {
	m := len(ref)
	switch m {
	case 1:
		best := ref[0]
		for _, p := range pts {
			best = math.Max(best, p[0])
		}
		return best - ref[0]
	case 2:
		return hv2(pts, ref)
	case 3:
		return hso(pts, ref)
	}
	return wfg(pts, ref)
}

// hso slices along the last objective (the HSO scheme of While et al. 2006).
func hso(pts [][]float64, ref []float64) float64 {
	m := len(ref)
	// Sort by the last objective, largest first; slice k spans
	// [v_{k+1}, v_k] along it, and its base is the (m−1)-objective
	// hypervolume of the first k+1 points.
	s := append([][]float64(nil), pts...)
	sort.SliceStable(s, func(a, b int) bool { return s[a][m-1] > s[b][m-1] })
	total := 0.0
	var base [][]float64
	for k, p := range s {
		base = append(base, p[:m-1])
		next := ref[m-1]
		if k+1 < len(s) {
			next = s[k+1][m-1]
		}
		h := p[m-1] - next
		if h <= 0 {
			continue
		}
		base = nondominated(base)
		total += h * hv(base, ref[:m-1])
	}
	return total
}

// hv2 sweeps mutually non-dominated 2-objective points: sorted by the first
// objective decreasing, the second increases, and each point adds the
// rectangle between its first coordinate and ref's above the previous one's
// second coordinate.
func hv2(pts [][]float64, ref []float64) float64 {
	s := append([][]float64(nil), pts...)
	sort.SliceStable(s, func(a, b int) bool { return s[a][0] > s[b][0] })
	total, prev := 0.0, ref[1]
	for _, p := range s {
		if p[1] > prev {
			total += (p[0] - ref[0]) * (p[1] - prev)
			prev = p[1]
		}
	}
	return total
}

// nondominated returns the distinct non-dominated points of pts.
func nondominated(pts [][]float64) [][]float64 {
	idx := Front(pts)
	out := make([][]float64, len(idx))
	for i, k := range idx {
		out[i] = pts[k]
	}
	return out
}

// RefPoint returns the reference point for Y (n×m, maximization) when the
// user gives none, by the rule of BoTorch's infer_reference_point (which Ax
// applies): with F the Pareto front of Y, nadir_j = min_{p∈F} p_j and
// range_j = max_{p∈F} p_j − nadir_j, the point is
//
//	r_j = nadir_j − 0.1 · max(range_j, 1e-7).
//
// Degenerate cases: a front of one point has no range, and |nadir_j| is used
// in its place (so r = p − 0.1|p|, floored at 1e-7 below p); an objective on
// which the front does not vary gets the 1e-7 floor. It returns nil when Y
// has no row free of NaN.
func RefPoint(Y [][]float64) []float64 {
	idx := Front(Y)
	if len(idx) == 0 {
		return nil
	}
	m := len(Y[idx[0]])
	lo := append([]float64(nil), Y[idx[0]]...)
	hi := append([]float64(nil), Y[idx[0]]...)
	for _, i := range idx[1:] {
		for j, v := range Y[i] {
			lo[j] = math.Min(lo[j], v)
			hi[j] = math.Max(hi[j], v)
		}
	}
	ref := make([]float64, m)
	for j := range ref {
		r := hi[j] - lo[j]
		if len(idx) == 1 {
			r = math.Abs(lo[j])
		}
		ref[j] = lo[j] - 0.1*math.Max(r, 1e-7)
	}
	return ref
}

// aboveRef returns the points of pts strictly above ref in every
// objective; it panics when a point's length differs from ref's.
func aboveRef(pts [][]float64, ref []float64) [][]float64 {
	var out [][]float64
	for _, p := range pts {
		if len(p) != len(ref) {
			panic("pareto: point and reference point lengths differ")
		}
		if above(p, ref) {
			out = append(out, p)
		}
	}
	return out
}

func above(p, ref []float64) bool {
	for j := range p {
		if !(p[j] > ref[j]) {
			return false
		}
	}
	return true
}

func equal(a, b []float64) bool {
	for j := range a {
		if a[j] != b[j] {
			return false
		}
	}
	return true
}

func hasNaN(a []float64) bool {
	for _, v := range a {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}
