package acq

import (
	"context"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// maxEnumerate is the largest number of categorical combinations (the
// product of the choice counts) that Maximize enumerates exactly at each
// categorical step; beyond it the step tries every single-coordinate change
// of choice.
const maxEnumerate = 64

// mixedRounds bounds the alternations between the continuous local search
// and the categorical step of one restart.
const mixedRounds = 4

// CategoriesOf returns the choice counts per coordinate of g's kernel when
// it is a gp.Mixed (for OptimizeSettings.Categories), else nil.
func CategoriesOf(g *gp.GP) []int {
	if g == nil {
		return nil
	}
	if m, ok := g.Kernel().(*gp.Mixed); ok {
		return m.Categories()
	}
	return nil
}

// mixedSearch is Maximize's handling of categorical coordinates over a
// flat batch x (q·d). A categorical step sets, for each batch point in
// turn, its choices to the best combination (all of them when there are ≤
// maxEnumerate, else the best single-coordinate change), other coordinates
// fixed. Every restart takes one categorical step from its start and then
// one continuous local search with the categorical coordinates fixed (the
// cost of a continuous restart plus one screen of the combinations); the
// mixedPolish best restarts then alternate
//
//	repeat: categorical step; continuous local search
//	until the categorical step no longer improves α (≤ mixedRounds rounds).
//
// α is piecewise constant along a categorical coordinate (the mixed kernel
// compares choices only for equality), so gradients carry no information
// there and the choices are searched by evaluation instead. A zero-value
// (nil cats) search is a no-op: continuous spaces are optimized exactly as
// before.
type mixedSearch struct {
	cats   []int  // choices per coordinate (len d), or nil
	q, d   int    // batch shape
	idx    []int  // the categorical coordinates
	fixed  []bool // per flat coordinate (q·d): categorical
	combos int    // Π n_j, saturated above maxEnumerate
}

func newMixedSearch(cats []int, q, d int) *mixedSearch {
	m := &mixedSearch{q: q, d: d, combos: 1}
	for j, n := range cats {
		if n > 0 {
			m.idx = append(m.idx, j)
			m.combos = min(m.combos*n, maxEnumerate+1)
		}
	}
	if len(m.idx) == 0 {
		return &mixedSearch{q: q, d: d}
	}
	m.cats = cats
	m.fixed = make([]bool, q*d)
	for r := 0; r < q; r++ {
		for _, j := range m.idx {
			m.fixed[r*d+j] = true
		}
	}
	return m
}

// centre is the unit-cube centre of choice c of n.
func centre(c, n int) float64 { return (float64(c) + 0.5) / float64(n) }

// snap moves every categorical coordinate of the flat batch x to the centre
// of its bin.
func (m *mixedSearch) snap(x []float64) {
	for r := 0; r < m.q; r++ {
		for _, j := range m.idx {
			n := m.cats[j]
			x[r*m.d+j] = centre(gp.Bin(x[r*m.d+j], n), n)
		}
	}
}

// snapRaw snaps the categorical coordinates of every raw sample.
func snapRaw(raw *mat.Dense, cats []int, q, d int) {
	m := newMixedSearch(cats, q, d)
	if m.cats == nil {
		return
	}
	r, _ := raw.Dims()
	for i := 0; i < r; i++ {
		m.snap(raw.RawRowView(i))
	}
}

// mixedPolish is the number of restarts, the best after their first local
// search, that continue with alternating categorical steps and local
// searches (at most mixedRounds); the others stop after one local search.
const mixedPolish = 2

// start runs one restart's first phase: local (a continuous local search of
// x in place returning α there) from x, after, on a mixed space, snapping x
// to bin centres and choosing its categories by a categorical step at its
// continuous coordinates (a screen of all combinations by one evaluation
// each, far cheaper than a local search per combination). It returns α at
// the final x. On a continuous space it is local(x).
func (m *mixedSearch) start(p *problem, x []float64, local func([]float64) float64) float64 {
	if m.cats == nil {
		return local(x)
	}
	m.snap(x)
	v := evalValue(p.f, x, m.q, m.d)
	m.step(p, x, &v)
	return math.Max(v, local(x))
}

// polish continues a restart whose first phase ended at x with α = v: it
// alternates categorical steps with local searches until a step no longer
// improves α (at most mixedRounds rounds) and returns α at the final x.
func (m *mixedSearch) polish(ctx context.Context, p *problem, x []float64, v float64, local func([]float64) float64) float64 {
	for round := 0; round < mixedRounds && ctx.Err() == nil; round++ {
		if !m.step(p, x, &v) {
			break
		}
		v = math.Max(v, local(x))
	}
	return v
}

// best returns the indices of the mixedPolish largest values of res (ties
// to the lower index).
func (m *mixedSearch) best(res []float64) []int {
	idx := make([]int, len(res))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return res[idx[a]] > res[idx[b]] })
	return idx[:min(mixedPolish, len(idx))]
}

// step improves the choices of each batch point in turn, in place, keeping
// *v = α(x) current; it reports whether anything changed. The candidates of
// a point (every combination when there are ≤ maxEnumerate, else every
// single-coordinate change of choice) are scored together, by one batched
// prediction when f is a batchScorer and q = 1.
func (m *mixedSearch) step(p *problem, x []float64, v *float64) bool {
	changed := false
	for r := 0; r < m.q; r++ {
		cands := m.candidates(x, r)
		vals := m.score(p.f, cands)
		best := -1
		for i, a := range vals {
			if a > *v && (math.IsInf(*v, -1) || a > *v+1e-12*math.Max(1, math.Abs(*v))) {
				best, *v = i, a
			}
		}
		if best >= 0 {
			copy(x, cands.RawRowView(best))
			changed = true
		}
	}
	return changed
}

// candidates returns the flat batches (one per row) that differ from x only
// in the choices of batch point r.
func (m *mixedSearch) candidates(x []float64, r int) *mat.Dense {
	orig := x[r*m.d : (r+1)*m.d]
	nc := m.combos
	if nc > maxEnumerate {
		nc = 0
		for _, j := range m.idx {
			nc += m.cats[j]
		}
	}
	out := mat.NewDense(nc, len(x), nil)
	t := 0
	next := func() []float64 {
		row := out.RawRowView(t)
		t++
		copy(row, x)
		return row[r*m.d : (r+1)*m.d]
	}
	if m.combos <= maxEnumerate {
		for c := 0; c < nc; c++ {
			m.setCombo(next(), c)
		}
		return out
	}
	for _, j := range m.idx {
		n := m.cats[j]
		for c := 0; c < n; c++ {
			pt := next()
			copy(pt, orig)
			pt[j] = centre(c, n)
		}
	}
	return out
}

// score returns α at every row of cands (NaN as −Inf).
func (m *mixedSearch) score(f Func, cands *mat.Dense) []float64 {
	n, _ := cands.Dims()
	out := make([]float64, n)
	if bs, ok := f.(batchScorer); ok && m.q == 1 {
		bs.evalRows(cands, out)
		for i, v := range out {
			if math.IsNaN(v) {
				out[i] = math.Inf(-1)
			}
		}
		return out
	}
	for i := range out {
		out[i] = evalValue(f, cands.RawRowView(i), m.q, m.d)
	}
	return out
}

// setCombo sets the categorical coordinates of one point to combination t
// (mixed radix over the categorical coordinates, first one fastest).
func (m *mixedSearch) setCombo(pt []float64, t int) {
	for _, j := range m.idx {
		n := m.cats[j]
		pt[j] = centre(t%n, n)
		t /= n
	}
}
