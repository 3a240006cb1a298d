package tes

import (
	"context"
	"math"
	"testing"

	"github.com/tesbo/tesbo/acq"
)

// BenchmarkProposeMultiBraninCurrin times the default acquisition's
// several-output proposal of q = 4 points on BraninCurrin (both objectives
// minimized, here negated) with 16 evaluated points: the speed
// target compares it with BoTorch's joint qLogNEHVI proposal.
func BenchmarkProposeMultiBraninCurrin(b *testing.B) {
	branin := func(x []float64) float64 {
		x1, x2 := 15*x[0]-5, 15*x[1]
		h := x2 - 5.1/(4*math.Pi*math.Pi)*x1*x1 + 5/math.Pi*x1 - 6
		return -(h*h + 10*(1-1/(8*math.Pi))*math.Cos(x1) + 10)
	}
	currin := func(x []float64) float64 {
		f := 1.0
		if x[1] > 0 {
			f = 1 - math.Exp(-1/(2*x[1]))
		}
		return -f * (2300*x[0]*x[0]*x[0] + 1900*x[0]*x[0] + 2092*x[0] + 60) /
			(100*x[0]*x[0]*x[0] + 500*x[0]*x[0] + 4*x[0] + 20)
	}
	d, err := newDeliver(acq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := multiState(b, uniformX(8, 16, 2), []acq.OutputKind{acq.Objective, acq.Objective},
			[]func(x []float64) float64{branin, currin}, uint64(i))
		s.RefPoint = []float64{-18, -6}
		b.StartTimer()
		if _, err := d.ProposeMulti(context.Background(), s, 4); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkProposeMultiSixObjectives times the default acquisition's
// proposal of q = 4 points on DTLZ2 with sdk.MaxObjectives = 6 objectives
// (d = 10, minimized, here negated) and 30 evaluated points: the most
// objectives a study takes, where x̄'s hypervolume gains are exclusive
// volumes (pareto.Contribution) in 6 objectives.
func BenchmarkProposeMultiSixObjectives(b *testing.B) {
	const m, d = 6, 10
	kinds := make([]acq.OutputKind, m)
	fns := make([]func(x []float64) float64, m)
	for k := range fns {
		kinds[k] = acq.Objective
		fns[k] = func(x []float64) float64 { return -dtlz2(x, m, k) }
	}
	dl, err := newDeliver(acq.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		s := multiState(b, uniformX(8, 30, d), kinds, fns, uint64(i))
		s.RefPoint = make([]float64, m)
		for j := range s.RefPoint {
			s.RefPoint[j] = -1.1 // BoTorch's DTLZ2 reference point, negated
		}
		b.StartTimer()
		if _, err := dl.ProposeMulti(context.Background(), s, 4); err != nil {
			b.Fatal(err)
		}
	}
}

// dtlz2 is objective k (0-based) of DTLZ2 with m objectives at x in the
// unit cube: (1 + g) Π_{j<m−1−k} cos(x_j π/2) · sin(x_{m−1−k} π/2) (the sine
// for k > 0), g = Σ_{j≥m−1} (x_j − ½)².
func dtlz2(x []float64, m, k int) float64 {
	g := 0.0
	for _, v := range x[m-1:] {
		g += (v - 0.5) * (v - 0.5)
	}
	f := 1 + g
	for j := 0; j < m-1-k; j++ {
		f *= math.Cos(x[j] * math.Pi / 2)
	}
	if k > 0 {
		f *= math.Sin(x[m-1-k] * math.Pi / 2)
	}
	return f
}
