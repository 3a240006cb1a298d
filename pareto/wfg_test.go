package pareto

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sphereFront returns n points on the positive orthant of the unit sphere
// in m objectives: almost all mutually non-dominated, the hard case.
func sphereFront(rng *rand.Rand, n, m int) [][]float64 {
	pts := make([][]float64, n)
	for i := range pts {
		p := make([]float64, m)
		s := 0.0
		for j := range p {
			p[j] = math.Abs(rng.NormFloat64())
			s += p[j] * p[j]
		}
		for j := range p {
			p[j] /= math.Sqrt(s)
		}
		pts[i] = p
	}
	return pts
}

// TestWFGAgainstSlicing compares WFG with the slicing scheme (exact by
// another route) on fronts with dominated points, ties and duplicates.
func TestWFGAgainstSlicing(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, m := range []int{3, 4, 5, 6} {
		for rep := 0; rep < 20; rep++ {
			pts := sphereFront(rng, 1+rng.IntN(25), m)
			for i := range pts {
				if rng.IntN(4) == 0 { // a dominated point
					for j := range pts[i] {
						pts[i][j] *= 0.8
					}
				}
				if rng.IntN(5) == 0 { // a tie in one objective
					pts[i][rng.IntN(m)] = 0.5
				}
			}
			pts = append(pts, pts[0]) // a duplicate
			ref := make([]float64, m)
			for j := range ref {
				ref[j] = -0.1 * rng.Float64()
			}
			nd := nondominated(pts)
			got, want := wfg(nd, ref), hso(nd, ref)
			if math.Abs(got-want) > 1e-12*math.Max(1, want) {
				t.Fatalf("m=%d rep=%d: wfg %v, slicing %v", m, rep, got, want)
			}
		}
	}
}

// TestContribution checks p's exclusive volume against the difference of
// two hypervolumes, for p dominated, outside the reference box, on the
// front and beyond it.
func TestContribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, m := range []int{1, 2, 3, 4, 5, 6} {
		for rep := 0; rep < 30; rep++ {
			front := sphereFront(rng, rng.IntN(20), m)
			ref := make([]float64, m)
			p := make([]float64, m)
			for j := range p {
				p[j] = 1.2*rng.Float64() - 0.1
			}
			want := Hypervolume(append(append([][]float64(nil), front...), p), ref) - Hypervolume(front, ref)
			want = math.Max(want, 0)
			got := Contribution(front, p, ref)
			if math.Abs(got-want) > 1e-12 {
				t.Fatalf("m=%d rep=%d: Contribution %v, difference of hypervolumes %v", m, rep, got, want)
			}
		}
	}
	if got := Contribution([][]float64{{2, 2}}, []float64{1, 1}, []float64{0, 0}); got != 0 {
		t.Errorf("a dominated point contributes %v, want 0", got)
	}
	if got := Contribution(nil, []float64{2, 3}, []float64{1, 1}); got != 2 {
		t.Errorf("the only point contributes %v, want its box 2", got)
	}
}

// BenchmarkHypervolume times the exact hypervolume of n points on the
// sphere, the fronts a study with m objectives builds. The 10-objective
// case took minutes by slicing alone (n^(m−1)).
func BenchmarkHypervolume(b *testing.B) {
	for _, c := range []struct{ m, n int }{{3, 100}, {4, 100}, {6, 100}, {8, 100}, {10, 40}} {
		pts := sphereFront(rand.New(rand.NewPCG(1, 2)), c.n, c.m)
		ref := make([]float64, c.m)
		b.Run(fmt.Sprintf("m=%d/n=%d", c.m, c.n), func(b *testing.B) {
			for b.Loop() {
				Hypervolume(pts, ref)
			}
		})
	}
}
