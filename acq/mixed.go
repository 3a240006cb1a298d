package acq

import (
	"context"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// MaxEnumerate is the largest number of categorical combinations (the
// product of the choice counts) that Maximize enumerates exactly at each
// categorical step; beyond it the step tries every single-coordinate change
// of choice.
const MaxEnumerate = 64

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
// flat batch x (q·d): the alternation
//
//	repeat: continuous local search with the categorical coordinates fixed;
//	        for each batch point, set its choices to the best combination
//	        (all of them when there are ≤ MaxEnumerate, else the best
//	        single-coordinate change), other coordinates fixed;
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
	combos int    // Π n_j, saturated above MaxEnumerate
}

func newMixedSearch(cats []int, q, d int) *mixedSearch {
	m := &mixedSearch{q: q, d: d, combos: 1}
	for j, n := range cats {
		if n > 0 {
			m.idx = append(m.idx, j)
			m.combos = min(m.combos*n, MaxEnumerate+1)
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

// alternate runs local (a continuous local search of x in place returning
// α there) and, on a mixed space, alternates it with categorical steps; it
// returns α at the final x.
func (m *mixedSearch) alternate(ctx context.Context, p *problem, x []float64, local func([]float64) float64) float64 {
	if m.cats == nil {
		return local(x)
	}
	m.snap(x)
	v := local(x)
	for round := 0; round < mixedRounds && ctx.Err() == nil; round++ {
		if !m.step(p, x, &v) {
			break
		}
		v = math.Max(v, local(x))
	}
	return v
}

// step improves the choices of each batch point in turn, in place, keeping
// *v = α(x) current; it reports whether anything changed.
func (m *mixedSearch) step(p *problem, x []float64, v *float64) bool {
	changed := false
	cand := make([]float64, len(x))
	for r := 0; r < m.q; r++ {
		row := x[r*m.d : (r+1)*m.d]
		best, bestV := []float64(nil), *v
		try := func() {
			copy(cand, x)
			if a := evalValue(p.f, cand, m.q, m.d); a > bestV+1e-12*math.Max(1, math.Abs(bestV)) {
				best, bestV = append(best[:0], cand[r*m.d:(r+1)*m.d]...), a
			}
		}
		orig := append([]float64(nil), row...)
		if m.combos <= MaxEnumerate {
			for t := 0; t < m.combos; t++ {
				m.setCombo(row, t)
				try()
			}
		} else {
			for _, j := range m.idx {
				n := m.cats[j]
				for c := 0; c < n; c++ {
					copy(row, orig)
					row[j] = centre(c, n)
					try()
				}
			}
		}
		copy(row, orig)
		if best != nil {
			copy(row, best)
			*v, changed = bestV, true
		}
	}
	return changed
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
