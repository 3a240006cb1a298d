package gp

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// localFixture returns n noisy observations of a smooth function on
// [0,1]^2 and the exact GP (SE, ℓ = 0.15, σ_n² = 1e-4) on them.
func localFixture(t *testing.T, n int) (*mat.Dense, []float64, *GP) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	X := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range y {
		a, b := rng.Float64(), rng.Float64()
		X.SetRow(i, []float64{a, b})
		y[i] = math.Sin(6*a)*math.Cos(4*b) + 0.01*rng.NormFloat64()
	}
	g, err := New(NewSE([]float64{0.15, 0.15}, 1), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return X, y, g
}

// localGP returns the GP on the local data with g's hyper-parameters
// expressed in region coordinates (length-scales divided by the widths).
func localGP(t *testing.T, g *GP, reg Region, rows []int, U *mat.Dense) *GP {
	t.Helper()
	y := make([]float64, len(rows))
	for k, i := range rows {
		y[k] = g.Y()[i]
	}
	p := g.Kernel().Params()
	for j := range reg.Width {
		p[j] -= math.Log(reg.Width[j])
	}
	lg, err := New(g.Kernel().WithParams(p), g.NoiseVar(), U, y)
	if err != nil {
		t.Fatal(err)
	}
	return lg
}

func TestLocalDataAllPointsIsExact(t *testing.T) {
	X, y, g := localFixture(t, 60)
	reg, rows, U, err := LocalData(X, y, 60, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reg.Whole() || len(rows) != 60 || !mat.Equal(U, X) {
		t.Fatalf("m = n: region %v, %d rows, inputs changed: %v", reg, len(rows), !mat.Equal(U, X))
	}
	lg := localGP(t, g, reg, rows, U)
	x := []float64{0.3, 0.7}
	m0, v0 := g.MeanVar(x)
	m1, v1 := lg.MeanVar(x)
	if m0 != m1 || v0 != v1 {
		t.Fatalf("m = n: local posterior (%v, %v) differs from the exact (%v, %v)", m1, v1, m0, v0)
	}
}

func TestLocalDataRegion(t *testing.T) {
	X, y, _ := localFixture(t, 400)
	const m = 100
	reg, rows, U, err := LocalData(X, y, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != m {
		t.Fatalf("%d rows in the region, want the %d nearest", len(rows), m)
	}
	in := 0
	u := make([]float64, 2)
	for i := 0; i < 400; i++ {
		reg.ToUnit(u, X.RawRowView(i))
		if u[0] >= 0 && u[0] <= 1 && u[1] >= 0 && u[1] <= 1 {
			in++
		}
	}
	if in != m {
		t.Fatalf("%d observations inside the region, but %d selected", in, m)
	}
	for k := range rows {
		for _, v := range U.RawRowView(k) {
			if v < -1e-12 || v > 1+1e-12 {
				t.Fatalf("selected row %d maps outside the unit cube: %v", rows[k], U.RawRowView(k))
			}
		}
	}
	back := make([]float64, 2)
	reg.FromUnit(back, U.RawRowView(0))
	if d := math.Abs(back[0]-X.At(rows[0], 0)) + math.Abs(back[1]-X.At(rows[0], 1)); d > 1e-12 {
		t.Fatalf("FromUnit(ToUnit(x)) is %v away from x", d)
	}
}

// TestLocalPosteriorNearExact compares, in the central half of the
// region (where proposals concentrate), the local GP's posterior with the
// exact GP's at the same hyper-parameters: n = 400, m = 100, ℓ = 0.15.
// Stated tolerance: means and standard deviations within 0.02 (prior
// standard deviation 1; measured 0.007 and 0.001).
func TestLocalPosteriorNearExact(t *testing.T) {
	X, y, g := localFixture(t, 400)
	reg, rows, U, err := LocalData(X, y, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	lg := localGP(t, g, reg, rows, U)
	rng := rand.New(rand.NewPCG(5, 6))
	var worstM, worstS float64
	x, u := make([]float64, 2), make([]float64, 2)
	for range 200 {
		for j := range u {
			u[j] = 0.25 + 0.5*rng.Float64()
		}
		reg.FromUnit(x, u)
		m0, v0 := g.MeanVar(x)
		m1, v1 := lg.MeanVar(u)
		worstM = math.Max(worstM, math.Abs(m1-m0))
		worstS = math.Max(worstS, math.Abs(math.Sqrt(v1)-math.Sqrt(v0)))
	}
	t.Logf("central half of the region: largest |Δmean| %.2g, |Δsd| %.2g", worstM, worstS)
	if worstM > 0.02 || worstS > 0.02 {
		t.Fatalf("local posterior differs from the exact one: |Δmean| up to %.3g, |Δsd| up to %.3g (tolerance 0.02)", worstM, worstS)
	}
}

// A categorical coordinate keeps its whole range and does not count in
// the distance: the region is chosen on the continuous ones alone.
func TestLocalDataCategorical(t *testing.T) {
	X, y, _ := localFixture(t, 200)
	reg, rows, _, err := LocalData(X, y, 40, []int{0, 3})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Lo[1] != 0 || reg.Width[1] != 1 {
		t.Fatalf("categorical coordinate's range is [%v, %v], want [0, 1]", reg.Lo[1], reg.Lo[1]+reg.Width[1])
	}
	if reg.Width[0] >= 1 || len(rows) != 40 {
		t.Fatalf("continuous coordinate's width %v, %d rows: want a proper sub-box holding 40", reg.Width[0], len(rows))
	}
	if _, _, _, err := LocalData(X, y, 0, nil); err == nil {
		t.Fatal("m = 0 accepted")
	}
}

// TestInRegionSamePosterior: the GP re-expressed in a region's coordinates
// has the original's mean and variance at corresponding points, gradients
// scaled by the widths (chain rule), for every kernel and a Mixed one.
func TestInRegionSamePosterior(t *testing.T) {
	reg := Region{Lo: []float64{0.2, 0, 0.55}, Width: []float64{0.3, 1, 0.1}}
	ks := append(kernels(3), NewMixed([]int{0, 3, 0}, true, []float64{0.3, 0.5, 0.4}, 1.1))
	for _, k := range ks {
		g := testProblem(t, k, 25, 1e-3, 7)
		h, err := g.InRegion(reg)
		if err != nil {
			t.Fatal(err)
		}
		rng := newRNG(11)
		for range 20 {
			u := []float64{rng.Float64(), rng.Float64(), rng.Float64()*1.4 - 0.2}
			x := make([]float64, 3)
			for j := range u {
				x[j] = reg.Lo[j] + reg.Width[j]*u[j]
			}
			dm, dv, em, ev := make([]float64, 3), make([]float64, 3), make([]float64, 3), make([]float64, 3)
			m, v := g.MeanVarGrad(x, dm, dv)
			mu, vu := h.MeanVarGrad(u, em, ev)
			for j := range dm {
				dm[j] *= reg.Width[j]
				dv[j] *= reg.Width[j]
			}
			checkClose(t, kname(k)+" mean", []float64{mu}, []float64{m}, 1e-10, 1e-12)
			checkClose(t, kname(k)+" variance", []float64{vu}, []float64{v}, 1e-10, 1e-12)
			checkClose(t, kname(k)+" mean gradient", em, dm, 1e-9, 1e-11)
			checkClose(t, kname(k)+" variance gradient", ev, dv, 1e-9, 1e-11)
		}
	}
}

func TestInRegionRefusesBadRegions(t *testing.T) {
	g := testProblem(t, NewMixed([]int{0, 3}, true, []float64{0.3, 0.5}, 1), 10, 1e-3, 1)
	for _, reg := range []Region{
		{Lo: []float64{0}, Width: []float64{1}},
		{Lo: []float64{0, 0}, Width: []float64{0, 1}},
		{Lo: []float64{math.NaN(), 0}, Width: []float64{1, 1}},
		{Lo: []float64{0.1, 0}, Width: []float64{0.5, 0.5}},
	} {
		if _, err := g.InRegion(reg); err == nil {
			t.Errorf("region %+v accepted", reg)
		}
	}
}

// RowsToUnit and RowsFromUnit are inverse on the region; with inside,
// rows outside it are dropped.
func TestRegionRows(t *testing.T) {
	reg := Region{Lo: []float64{0.2, 0.5}, Width: []float64{0.4, 0.25}}
	P := mat.NewDense(3, 2, []float64{0.3, 0.6, 0.9, 0.6, 0.6, 0.75})
	all := reg.RowsToUnit(P, false)
	if r, _ := all.Dims(); r != 3 || math.Abs(all.At(1, 0)-1.75) > 1e-12 {
		t.Fatalf("all rows: %v", mat.Formatted(all))
	}
	in := reg.RowsToUnit(P, true)
	if r, _ := in.Dims(); r != 2 {
		t.Fatalf("inside rows: %v, want the first and the last", mat.Formatted(in))
	}
	back := reg.RowsFromUnit(in)
	want := mat.NewDense(2, 2, []float64{0.3, 0.6, 0.6, 0.75})
	if !mat.EqualApprox(back, want, 1e-12) {
		t.Fatalf("round trip: %v, want %v", mat.Formatted(back), mat.Formatted(want))
	}
	if reg.RowsToUnit(mat.NewDense(1, 2, []float64{0, 0}), true) != nil || reg.RowsToUnit(nil, false) != nil || reg.RowsFromUnit(nil) != nil {
		t.Fatal("no rows left should give nil")
	}
}

// Along an Int coordinate the local box reaches IntSpan bins each way, so
// that a search in it can move the integer; without the span the same
// data give a box narrower than one bin. The rows are the observations
// inside the box, at most m.
func TestLocalDataInt(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	const n, m, bins = 1000, 8, 8
	step := 1.0 / bins
	X := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range y {
		k := rng.IntN(bins)
		a, b := rng.Float64(), (float64(k)+0.5)*step // b: an Int's bin centre
		X.SetRow(i, []float64{a, b})
		y[i] = -math.Abs(a-0.4) - math.Abs(b-0.45)
	}
	plainReg, _, _, err := LocalData(X, y, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plainReg.Width[1] >= step {
		t.Fatalf("fixture too easy: without the span the box is %v wide along the Int (one bin is %v)", plainReg.Width[1], step)
	}
	reg, rows, U, err := LocalDataInt(X, y, m, nil, []float64{0, step})
	if err != nil {
		t.Fatal(err)
	}
	inc := X.RawRowView(slices.Index(y, slices.Max(y)))
	lo, hi := math.Max(0, inc[1]-IntSpan*step), math.Min(1, inc[1]+IntSpan*step)
	if math.Abs(reg.Lo[1]-lo) > 1e-15 || math.Abs(reg.Lo[1]+reg.Width[1]-hi) > 1e-15 {
		t.Fatalf("Int coordinate's range [%v, %v], want [%v, %v]", reg.Lo[1], reg.Lo[1]+reg.Width[1], lo, hi)
	}
	if len(rows) == 0 || len(rows) > m {
		t.Fatalf("%d rows, want 1 to %d", len(rows), m)
	}
	inside := 0
	u := make([]float64, 2)
	for i := range n {
		reg.ToUnit(u, X.RawRowView(i))
		if InUnitCube(u) {
			inside++
		}
	}
	for k, i := range rows {
		if !InUnitCube(U.RawRowView(k)) {
			t.Fatalf("row %d (observation %d) lies outside the box", k, i)
		}
	}
	if inside > m && len(rows) != m || inside <= m && len(rows) != inside {
		t.Fatalf("%d rows for %d observations inside the box (m = %d)", len(rows), inside, m)
	}
	if _, _, _, err := LocalDataInt(X, y, m, nil, []float64{0}); err == nil {
		t.Fatal("Int steps of the wrong length accepted")
	}
}

// StepsToUnit expresses unit-cube widths in region units: a bin of 0.1
// along a coordinate the region spans 0.4 of is a quarter of the region.
func TestStepsToUnit(t *testing.T) {
	reg := Region{Lo: []float64{0.2, 0}, Width: []float64{0.4, 1}}
	got := reg.StepsToUnit([]float64{0.1, 0})
	if len(got) != 2 || math.Abs(got[0]-0.25) > 1e-15 || got[1] != 0 {
		t.Fatalf("StepsToUnit = %v, want [0.25 0]", got)
	}
	if reg.StepsToUnit(nil) != nil {
		t.Fatal("StepsToUnit(nil) is not nil")
	}
}

// SamplePaths refuses, before allocating, the random phases of more
// categorical choices than MaxPathPhaseBytes holds (65,536 choices × 1000
// features × 5 paths would be 2.6 GB), and draws within the bound.
func TestSamplePathsBoundsChoicePhases(t *testing.T) {
	g := testProblem(t, NewMixed([]int{0, 1 << 16}, true, []float64{0.3, 0.5}, 1), 10, 1e-3, 1)
	rng := rand.New(rand.NewPCG(3, 4))
	if _, err := g.SamplePaths(rng, 5, 1000); err == nil || !strings.Contains(err.Error(), "MaxPathPhaseBytes") {
		t.Fatalf("5 paths × 1000 features × 65536 choices: %v", err)
	}
	if ps, err := g.SamplePaths(rng, 1, 100); err != nil || len(ps) != 1 {
		t.Fatalf("1 path × 100 features: %v", err)
	}
}

// Proposals crowding the smallest box (a long study refining one point,
// or a random search inside the local box) put more than m points within
// MinRegionWidth/2 of the incumbent: the local data are still the m
// nearest (the probe's study fitted 2415 trials with m = 100).
func TestLocalDataCrowdedMinimumBox(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	const n, m = 400, 50
	X := mat.NewDense(n, 2, nil)
	y := make([]float64, n)
	for i := range n {
		X.Set(i, 0, 0.3+2e-4*rng.Float64())
		X.Set(i, 1, 0.6+2e-4*rng.Float64())
		y[i] = rng.Float64()
	}
	reg, rows, U, err := LocalData(X, y, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := U.Dims(); len(rows) != m || r != m {
		t.Fatalf("%d rows (%d inputs), want the %d nearest", len(rows), r, m)
	}
	if math.Abs(reg.Width[0]-MinRegionWidth) > 1e-12 {
		t.Errorf("width %v, want the minimum %v", reg.Width[0], MinRegionWidth)
	}
}
