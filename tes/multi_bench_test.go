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
