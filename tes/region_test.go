package tes

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

func inBox(reg gp.Region, x []float64) bool {
	for j, v := range x {
		if v < reg.Lo[j]-1e-12 || v > reg.Lo[j]+reg.Width[j]+1e-12 {
			return false
		}
	}
	return true
}

// bestOf is the evaluated point with the largest posterior mean, the
// centre Deliver gives the box.
func bestOf(g *gp.GP) int {
	b, _ := acq.BestMean(g)
	return b
}

// The box is centred on the evaluated point with the largest posterior
// mean (clipped to the cube) and its sides are proportional to the
// length-scales, L times their geometric mean; a categorical coordinate
// keeps its whole range.
func TestTrustRegionShape(t *testing.T) {
	X, y := toyData(5, 15, 3, 1e-4)
	g, err := gp.New(gp.NewSE([]float64{0.1, 0.4, 0.2}, 1), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	best, _ := acq.BestMean(g)
	c := X.RawRowView(best)
	reg, ok := trustRegion(g, best, 0.5, nil)
	if !ok {
		t.Fatal("box of side 0.5 is the whole cube")
	}
	gm := math.Cbrt(0.1 * 0.4 * 0.2)
	for j, l := range []float64{0.1, 0.4, 0.2} {
		half := 0.25 * l / gm
		lo, hi := math.Max(0, c[j]-half), math.Min(1, c[j]+half)
		if math.Abs(reg.Lo[j]-lo) > 1e-12 || math.Abs(reg.Width[j]-(hi-lo)) > 1e-12 {
			t.Errorf("coordinate %d: box [%v, +%v], want [%v, %v]", j, reg.Lo[j], reg.Width[j], lo, hi)
		}
	}
	// An Int coordinate with 4 values (bins of 0.25) keeps its neighbours'
	// bins in a box far narrower than one bin.
	reg, _ = trustRegion(g, best, 0.01, []float64{0, 0.25, 0})
	if lo, hi := math.Max(0, c[1]-0.375), math.Min(1, c[1]+0.375); math.Abs(reg.Lo[1]-lo) > 1e-12 || math.Abs(reg.Width[1]-(hi-lo)) > 1e-12 {
		t.Errorf("Int coordinate: box [%v, +%v], want [%v, %v]", reg.Lo[1], reg.Width[1], lo, hi)
	}
	if reg.Width[0] > 0.01 {
		t.Errorf("continuous coordinate widened to %v by another's Int step", reg.Width[0])
	}
	if _, ok := trustRegion(g, best, 100, nil); ok {
		t.Error("a box of side 100 is not the whole cube")
	}

	m := gp.NewMixed([]int{0, 3, 0}, true, []float64{0.1, 0.5, 0.2}, 1)
	gm2, err := gp.New(m, 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ = trustRegion(gm2, bestOf(gm2), 0.5, nil)
	if reg.Lo[1] != 0 || reg.Width[1] != 1 {
		t.Errorf("categorical coordinate: box [%v, +%v], want its whole range", reg.Lo[1], reg.Width[1])
	}
	c = X.RawRowView(bestOf(gm2))
	for j, l := range []float64{0.1, 0, 0.2} {
		if l == 0 {
			continue
		}
		// The geometric mean is over the continuous coordinates only.
		half := 0.25 * l / math.Sqrt(0.1*0.2)
		lo, hi := math.Max(0, c[j]-half), math.Min(1, c[j]+half)
		if math.Abs(reg.Lo[j]-lo) > 1e-12 || math.Abs(reg.Width[j]-(hi-lo)) > 1e-12 {
			t.Errorf("mixed, coordinate %d: box [%v, +%v], want [%v, %v]", j, reg.Lo[j], reg.Width[j], lo, hi)
		}
	}
}

// Deliver's TES points lie in the trust region and the carried X* comes
// back in unit-cube coordinates; with TrustRegion < 0 TES searches the
// whole cube and leaves the box.
func TestDeliverSearchesTrustRegion(t *testing.T) {
	ctx := context.Background()
	g := toyGP(t, 3, 12, 2, 0.25, 1e-4)
	reg, ok := trustRegion(g, bestOf(g), 0.2, nil)
	if !ok {
		t.Fatal("no trust region on the test GP")
	}
	outside := 0
	for _, L := range []float64{0, -1} {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings.TrustRegion = L
		for iter := 1; iter <= 3; iter++ {
			X, err := p.Propose(ctx, deliverState(g, iter), 4)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < 4; i++ { // row 0 is x̄
				if !inBox(reg, X.RawRowView(i)) {
					if L == 0 {
						t.Fatalf("iteration %d: TES point %v outside the box %+v", iter, X.RawRowView(i), reg)
					}
					outside++
				}
			}
			if L != 0 {
				continue
			}
			prev := p.TES.Scorer.previous(2)
			xs := p.TES.Scorer.lastModel().XStar
			if prev == nil || !mat.EqualApprox(prev, reg.RowsFromUnit(xs), 1e-15) {
				t.Fatalf("carried X* %v is not the model's X* %v mapped back", prev, xs)
			}
			for i := range prev.RawMatrix().Rows {
				if !inBox(reg, prev.RawRowView(i)) {
					t.Fatalf("carried X* %v outside the box", prev.RawRowView(i))
				}
			}
		}
	}
	if outside == 0 {
		t.Error("with the whole cube every TES point stayed in the box: the test cannot tell the two apart")
	}
}

type halfPlane struct{}

// LogProb is log σ(8(x₀ − 0.4)): failures on the left.
func (halfPlane) LogProb(x, grad []float64) float64 {
	z := 8 * (x[0] - 0.4)
	if grad != nil {
		for j := range grad {
			grad[j] = 0
		}
		grad[0] = 8 / (1 + math.Exp(z))
	}
	return -math.Log1p(math.Exp(-z))
}

func TestRegionFeasibleChainRule(t *testing.T) {
	reg := gp.Region{Lo: []float64{0.2, 0.1}, Width: []float64{0.3, 0.5}}
	f := regionFeasible{f: halfPlane{}, reg: reg}
	for _, u := range [][]float64{{0.1, 0.5}, {0.7, 0.2}, {0.5, 0.9}} {
		x := []float64{0.2 + 0.3*u[0], 0.1 + 0.5*u[1]}
		if got, want := f.LogProb(u, nil), (halfPlane{}).LogProb(x, nil); math.Abs(got-want) > 1e-14 {
			t.Errorf("log p at %v: %v, want %v", u, got, want)
		}
		grad := make([]float64, 2)
		f.LogProb(u, grad)
		for j := range u {
			const h = 1e-6
			up, um := append([]float64(nil), u...), append([]float64(nil), u...)
			up[j] += h
			um[j] -= h
			fd := (f.LogProb(up, nil) - f.LogProb(um, nil)) / (2 * h)
			if math.Abs(grad[j]-fd) > 1e-7 {
				t.Errorf("∂/∂u_%d at %v: %v, finite differences %v", j, u, grad[j], fd)
			}
		}
	}
}
