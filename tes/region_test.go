package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
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

// trustRegion is trustRegionOver with every coordinate boxable.
func trustRegion(g *gp.GP, c []float64, L float64, intStep []float64, whole []bool) (gp.Region, bool) {
	return trustRegionOver(g, c, L, intStep, whole, g.Dim())
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
	reg, ok := trustRegion(g, X.RawRowView(best), 0.5, nil, nil)
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
	reg, _ = trustRegion(g, X.RawRowView(best), 0.01, []float64{0, 0.25, 0}, nil)
	if lo, hi := math.Max(0, c[1]-0.375), math.Min(1, c[1]+0.375); math.Abs(reg.Lo[1]-lo) > 1e-12 || math.Abs(reg.Width[1]-(hi-lo)) > 1e-12 {
		t.Errorf("Int coordinate: box [%v, +%v], want [%v, %v]", reg.Lo[1], reg.Width[1], lo, hi)
	}
	if reg.Width[0] > 0.01 {
		t.Errorf("continuous coordinate widened to %v by another's Int step", reg.Width[0])
	}
	if _, ok := trustRegion(g, X.RawRowView(best), 100, nil, nil); ok {
		t.Error("a box of side 100 is not the whole cube")
	}

	m := gp.NewMixed([]int{0, 3, 0}, true, []float64{0.1, 0.5, 0.2}, 1)
	gm2, err := gp.New(m, 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ = trustRegion(gm2, X.RawRowView(bestOf(gm2)), 0.5, nil, nil)
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
	g := toyGP(t, 3, 12, 2, 0.25, 1e-4)
	reg, ok := trustRegion(g, g.X().RawRowView(bestOf(g)), 0.2, nil, nil)
	if !ok {
		t.Fatal("no trust region on the test GP")
	}
	outside := tesOutsideBox(t, g, nil, reg, func(L float64, p *Deliver, _ *mat.Dense) {
		if L != 0 {
			return
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
	})
	if outside == 0 {
		t.Error("with the whole cube every TES point stayed in the box: the test cannot tell the two apart")
	}
}

// tesOutsideBox runs Deliver on g with the given pins, with its trust
// region (L = 0) and over the whole cube (L = −1), batches of 4 at
// iterations 1–3, and calls check on each batch. It fails when a TES
// point (rows 1–3; row 0 is x̄) of the trust region's batches leaves reg,
// and returns how many of the whole cube's did.
func tesOutsideBox(t *testing.T, g *gp.GP, prep func(*acq.State), reg gp.Region, check func(L float64, p *Deliver, X *mat.Dense)) int {
	t.Helper()
	outside := 0
	for _, L := range []float64{0, -1} {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings.TrustRegion = L
		for iter := 1; iter <= 3; iter++ {
			st := deliverState(g, iter)
			if prep != nil {
				prep(st)
			}
			X, err := p.Propose(context.Background(), st, 4)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < 4; i++ {
				if !inBox(reg, X.RawRowView(i)) {
					if L == 0 {
						t.Fatalf("iteration %d: TES point %v outside the box %+v", iter, X.RawRowView(i), reg)
					}
					outside++
				}
			}
			check(L, p, X)
		}
	}
	return outside
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

// A pinned coordinate keeps its whole range in the box (so its pin reads
// the same in the box's coordinates) and takes no part in the
// length-scales' normalization: the free coordinates share the box.
func TestTrustRegionPinned(t *testing.T) {
	X, y := toyData(5, 15, 3, 1e-4)
	g, err := gp.New(gp.NewSE([]float64{0.1, 0.4, 0.2}, 1), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	pinned := []float64{math.NaN(), 0.3, math.NaN()}
	c, _ := acq.BestMeanOnSlice(g, pinned)
	reg, ok := trustRegion(g, c.RawRowView(0), 0.5, nil, wholeCoords(&acq.State{GP: g, Pinned: pinned}))
	if !ok {
		t.Fatal("box of side 0.5 is the whole cube")
	}
	if reg.Lo[1] != 0 || reg.Width[1] != 1 {
		t.Errorf("pinned coordinate: box [%v, +%v], want its whole range", reg.Lo[1], reg.Width[1])
	}
	gm := math.Sqrt(0.1 * 0.2)
	for _, j := range []int{0, 2} {
		half := 0.25 * []float64{0.1, 0.4, 0.2}[j] / gm
		x := c.At(0, j)
		lo, hi := math.Max(0, x-half), math.Min(1, x+half)
		if math.Abs(reg.Lo[j]-lo) > 1e-12 || math.Abs(reg.Width[j]-(hi-lo)) > 1e-12 {
			t.Errorf("coordinate %d: box [%v, +%v], want [%v, %v]", j, reg.Lo[j], reg.Width[j], lo, hi)
		}
	}
}

// With a pinned parameter Deliver's TES points lie in the trust region
// around the best point moved onto the slice and hold the pin exactly;
// with TrustRegion < 0 they leave it (so the test can tell).
func TestDeliverPinnedSearchesTrustRegion(t *testing.T) {
	g := toyGP(t, 3, 12, 3, 0.25, 1e-4)
	pinned := []float64{math.NaN(), 0.7, math.NaN()}
	c, _ := acq.BestMeanOnSlice(g, pinned)
	reg, ok := trustRegion(g, c.RawRowView(0), 0.2, nil, wholeCoords(&acq.State{GP: g, Pinned: pinned}))
	if !ok {
		t.Fatal("no trust region on the test GP")
	}
	outside := tesOutsideBox(t, g, func(st *acq.State) { st.Pinned = pinned }, reg, func(L float64, _ *Deliver, X *mat.Dense) {
		for i := range 4 {
			if X.At(i, 1) != 0.7 {
				t.Fatalf("L %v: point %v does not hold the pin 0.7", L, X.RawRowView(i))
			}
		}
	})
	if outside == 0 {
		t.Error("with the whole cube every TES point stayed in the box: the test cannot tell the two apart")
	}
}

// With pins, x̄ is worth an evaluation when it beats the best point of
// the slice, whatever the mean at evaluated points off the slice: a study
// whose best trials were made before the pins (or imported) still
// evaluates the slice's x̄.
func TestRecommendationPinnedOffSlice(t *testing.T) {
	ctx := context.Background()
	// A bump at (0.2, 0.5) with evaluated points near it and none on the
	// slice x₀ = 0.9, where the mean is lower than at the bump.
	X := mat.NewDense(8, 2, []float64{0.2, 0.5, 0.25, 0.4, 0.1, 0.6, 0.3, 0.55, 0.5, 0.1, 0.6, 0.9, 0.7, 0.3, 0.65, 0.6})
	y := make([]float64, 8)
	for i := range y {
		x := X.RawRowView(i)
		y[i] = math.Exp(-((x[0]-0.2)*(x[0]-0.2) + (x[1]-0.5)*(x[1]-0.5)) / 0.1)
	}
	g, err := gp.New(gp.NewSE([]float64{0.3, 0.3}, 1), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newDeliver(acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st := deliverState(g, 4)
	st.Pinned = []float64{0.9, math.NaN()}
	xbar, centre, worth, err := p.recommendation(ctx, st, p.Settings.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	if xbar.At(0, 0) != 0.9 || centre.At(0, 0) != 0.9 {
		t.Fatalf("x̄ %v and centre %v should lie on the slice x₀ = 0.9", xbar.RawRowView(0), centre.RawRowView(0))
	}
	_, means := acq.BestMean(g)
	if mu, _ := g.MeanVar(xbar.RawRowView(0)); mu >= slices.Max(means) {
		t.Fatalf("the slice's x̄ has mean %v, not below the evaluated best %v: the test checks nothing", mu, slices.Max(means))
	}
	if !worth {
		t.Error("the slice's x̄ was judged not worth an evaluation against points off the slice")
	}
}

// halfActive is the canonical map of a conditional space on (c, x1, x2,
// x3): c categorical with two choices, x3 active only on the second (the
// first choice's bin is c < 0.5), at its default 0.5 otherwise.
func halfActive(x []float64) []bool {
	if x[0] >= 0.5 {
		return nil
	}
	x[3] = 0.5
	return []bool{false, false, false, true}
}

// On a conditional space Deliver's TES points lie in the trust region,
// which keeps the categorical and the conditional coordinate whole, and
// are canonical; with TrustRegion < 0 they leave it (so the test can
// tell).
func TestDeliverConditionalSearchesTrustRegion(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	X := mat.NewDense(14, 4, nil)
	y := make([]float64, 14)
	for i := range 14 {
		x := X.RawRowView(i)
		x[0] = (float64(i%2) + 0.5) / 2
		for j := 1; j < 4; j++ {
			x[j] = rng.Float64()
		}
		halfActive(x)
		y[i] = math.Exp(-((x[1]-0.3)*(x[1]-0.3)+(x[2]-0.6)*(x[2]-0.6))/0.1) + 0.5*x[0]*x[3]
	}
	g, err := gp.New(gp.NewMixed([]int{2, 0, 0, 0}, false, []float64{1, 0.2, 0.2, 0.3}, 1), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	cond := []bool{false, false, false, true}
	prep := func(st *acq.State) { st.Canonical, st.Conditional = halfActive, cond }
	st := deliverState(g, 1)
	prep(st)
	c, _ := acq.BestMeanOnSlice(g, nil)
	reg, ok := trustRegion(g, c.RawRowView(0), 0.2, nil, wholeCoords(st))
	if !ok || reg.Width[0] != 1 || reg.Width[3] != 1 || reg.Width[1] >= 1 || reg.Width[2] >= 1 {
		t.Fatalf("box %+v: want the categorical and conditional coordinates whole, the others not", reg)
	}
	outside := tesOutsideBox(t, g, prep, reg, func(L float64, _ *Deliver, X *mat.Dense) {
		for i := range 4 {
			x := X.RawRowView(i)
			if x[0] < 0.5 && x[3] != 0.5 {
				t.Fatalf("L %v: point %v is not canonical (x3 inactive but not at its default)", L, x)
			}
		}
	})
	if outside == 0 {
		t.Error("with the whole cube every TES point stayed in the box: the test cannot tell the two apart")
	}
}
