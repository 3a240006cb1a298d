package bench

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Iteration axes label round, evenly spaced iterations, every one while
// there are few (gonum's default labelled 2, 6 and 10 on 1…10).
func TestIterTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		want   []string
	}{
		{1, 6, []string{"1", "2", "3", "4", "5", "6"}},
		{0, 7, []string{"0", "1", "2", "3", "4", "5", "6", "7"}},
		{1, 10, []string{"2", "4", "6", "8", "10"}},
		{0, 30, []string{"0", "5", "10", "15", "20", "25", "30"}},
		{1, 100, []string{"20", "40", "60", "80", "100"}},
		{0.5, 3.5, []string{"1", "2", "3"}},
	}
	for _, c := range cases {
		var labels []string
		for _, tk := range (iterTicks{}).Ticks(c.lo, c.hi) {
			if tk.Label != "" {
				labels = append(labels, tk.Label)
			}
		}
		if !slices.Equal(labels, c.want) {
			t.Errorf("ticks on [%v, %v]: labels %q, want %q", c.lo, c.hi, labels, c.want)
		}
	}
}

// The regret figure's legend sits in its own column right of the data
// area, not over the curves; the box plot leaves half a category of room
// at both ends so no box is cut off.
func TestFigureLayout(t *testing.T) {
	curves := []regretCurve{
		{Acquisition: "tes-ep", Iter: []int{0, 1, 2}, N: []int{2, 2, 2}, Median: []float64{0, -0.3, -0.7}, Q1: []float64{-0.1, -0.5, -1}, Q3: []float64{0.1, -0.1, -0.5}},
		{Acquisition: "random", Iter: []int{0, 1, 2}, N: []int{2, 2, 2}, Median: []float64{0, -0.1, -0.15}, Q1: []float64{-0.1, -0.2, -0.3}, Q3: []float64{0.1, 0, 0}},
	}
	p, err := regretPlot("t", curves)
	if err != nil {
		t.Fatal(err)
	}
	c := draw.New(vgimg.New(figWidth, figHeight))
	plotArea, legendArea, ok := legendColumn(p, c)
	if !ok {
		t.Fatal("no legend column")
	}
	data := p.DataCanvas(plotArea)
	leg := p.Legend
	leg.Top, leg.Left = true, true
	r := leg.Rectangle(legendArea)
	if r.Min.X < data.Max.X || r.Max.X > c.Max.X || r.Max.Y > data.Max.Y+1 || r.Min.Y < c.Min.Y {
		t.Fatalf("legend %v overlaps the data area %v or leaves the figure %v", r, data.Rectangle, c.Rectangle)
	}

	names := []string{"a", "b", "c"}
	b, err := boxPlot("t", names, map[string][]float64{"a": {1, 2, 3}, "b": {2, 3, 4}, "c": {0, 1, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if b.X.Min > -0.5 || b.X.Max < float64(len(names))-0.5 {
		t.Fatalf("box plot x range [%v, %v] leaves no room around boxes 0..%d", b.X.Min, b.X.Max, len(names)-1)
	}
}

// The regret figure plots the median log10 regret over runs, as the tables
// rank by, with the quartiles as its band: one seed stuck at a huge regret
// moves neither (ln of the mean regret, plotted before, rose by 30 decades).
func TestRegretPlotMedianIgnoresOneBadSeed(t *testing.T) {
	runsWith := func(last float64) []runResult {
		var runs []runResult
		for _, r := range []float64{1e-3, 1e-4, 1e-5, 1e-6, last} {
			reg := r
			runs = append(runs, runResult{Status: StatusDone, Rows: []row{{Iter: 1, Regret: &reg}}})
		}
		return runs
	}
	good, bad := curve("tes", runsWith(1e-2), 1), curve("tes", runsWith(1e30), 1)
	lineGood, bandGood := regretLines(good)
	lineBad, bandBad := regretLines(bad)
	if want := -4.0; math.Abs(lineBad[0].Y-want) > 1e-12 {
		t.Errorf("plotted median %v with one seed at 1e30, want log10 of the median regret, %v", lineBad[0].Y, want)
	}
	if lineBad[0] != lineGood[0] || bandBad[0] != bandGood[0] || bandBad[1] != bandGood[1] {
		t.Errorf("one seed at 1e30 instead of 1e-2 moved the figure: line %v → %v, band %v → %v", lineGood, lineBad, bandGood, bandBad)
	}
	if p, err := regretPlot("t", []regretCurve{bad}); err != nil || p == nil {
		t.Fatalf("RegretPlot: %v", err)
	}
}
