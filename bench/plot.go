package bench

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Figure size (about the paper's column width at 2×).
const (
	figWidth  = 5 * vg.Inch
	figHeight = 3.6 * vg.Inch
	figDPI    = 150
)

// acqColors fixes each built-in acquisition's colour across all figures
// (TES in warm colours, the baselines in cool ones, random search grey).
var acqColors = map[string]color.RGBA{
	"tes-ep": {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"tes-sp": {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"ei":     {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"ucb":    {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"mes":    {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"pes":    {R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	"qei":    {R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"qei-cl": {R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	"bucb":   {R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"lp-ei":  {R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
	"pi":     {R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	"ts":     {R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"random": {R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
}

func colorOf(acqName string, i int) color.RGBA {
	if c, ok := acqColors[acqName]; ok {
		return c
	}
	r, g, b, a := plotutil.DarkColors[i%len(plotutil.DarkColors)].RGBA()
	return color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(a >> 8)}
}

// writeFigures writes regret_<problem>_q<B>.png and box_<problem>_q<B>.png
// per group with data.
func writeFigures(dir string, s *Suite, groups []*group) ([]string, error) {
	var files []string
	for _, g := range groups {
		iters := s.itersOfLabel(g.key.label)
		base := fmt.Sprintf("%s_q%d.png", slug(g.key.label), g.key.batch)
		title := fmt.Sprintf("%s, |B| = %d", g.key.label, g.key.batch)
		var curves []regretCurve
		for _, a := range g.acqs {
			if c := curve(a, g.runs[a], iters); len(c.Iter) > 0 {
				curves = append(curves, c)
			}
		}
		if len(curves) > 0 {
			p, err := regretPlot(title, curves)
			if err != nil {
				return files, fmt.Errorf("figure %s: %w", title, err)
			}
			path := filepath.Join(dir, "regret_"+base)
			if err := savePNG(p, path); err != nil {
				return files, err
			}
			files = append(files, path)
		}
		finals := map[string][]float64{}
		var names []string
		for _, a := range g.acqs {
			for _, r := range g.runs[a] {
				if fr, ok := finalRegret(r, iters); ok {
					finals[a] = append(finals[a], log10Regret(fr))
				}
			}
			if len(finals[a]) > 0 {
				names = append(names, a)
			}
		}
		if len(names) > 0 {
			p, err := boxPlot(fmt.Sprintf("%s, iteration %d", title, iters), names, finals)
			if err != nil {
				return files, fmt.Errorf("box plot %s: %w", title, err)
			}
			path := filepath.Join(dir, "box_"+base)
			if err := savePNG(p, path); err != nil {
				return files, err
			}
			files = append(files, path)
		}
	}
	return files, nil
}

// regretPlot draws the regret figure: the median over runs of log10 of
// the immediate regret against the BO iteration, one line per
// acquisition, each with its interquartile range shaded — the statistic
// the summary tables rank by. (The paper plots ln of the mean regret,
// which one run stuck far from the optimum dominates.)
func regretPlot(title string, curves []regretCurve) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "iteration"
	p.X.Tick.Marker = iterTicks{}
	p.Y.Label.Text = "log10(immediate regret): median, quartiles"
	p.Legend.Top = true // savePNG draws it right of the data (legendColumn)
	p.Add(plotter.NewGrid())
	for i, c := range curves {
		col := colorOf(c.Acquisition, i)
		line, band := regretLines(c)
		if len(c.Iter) > 1 {
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			poly.Color = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0x40} // non-premultiplied: translucent fill
			poly.LineStyle.Width = 0
			p.Add(poly)
		}
		l, err := plotter.NewLine(line)
		if err != nil {
			return nil, err
		}
		l.Color = col
		l.Width = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(0)
		p.Add(l)
		if len(c.Iter) == 1 {
			sc, err := plotter.NewScatter(line)
			if err != nil {
				return nil, err
			}
			sc.Color = col
			p.Add(sc)
		}
		p.Legend.Add(c.Acquisition, l)
	}
	return p, nil
}

// regretLines returns a curve's plotted line, the median log10 regret per
// iteration, and the polygon of its interquartile band (Q1 forwards, Q3
// backwards).
func regretLines(c regretCurve) (line, band plotter.XYs) {
	line = make(plotter.XYs, len(c.Iter))
	band = make(plotter.XYs, 0, 2*len(c.Iter))
	var upper plotter.XYs
	for j, t := range c.Iter {
		line[j] = plotter.XY{X: float64(t), Y: c.Median[j]}
		band = append(band, plotter.XY{X: float64(t), Y: c.Q1[j]})
		upper = append(upper, plotter.XY{X: float64(t), Y: c.Q3[j]})
	}
	slices.Reverse(upper)
	return line, append(band, upper...)
}

// boxPlot draws one Tukey box per acquisition of the values (log10 final
// regrets), in the order of names (Appendix H's box plots).
func boxPlot(title string, names []string, values map[string][]float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "log10(final immediate regret)"
	p.Add(plotter.NewGrid())
	w := vg.Points(min(40, 280/float64(max(len(names), 1))))
	for i, a := range names {
		b, err := plotter.NewBoxPlot(w, float64(i), plotter.Values(values[a]))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", a, err)
		}
		col := colorOf(a, i)
		b.FillColor = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0x60}
		b.BoxStyle.Color = col
		b.WhiskerStyle.Color = col
		b.WhiskerStyle.Dashes = nil
		b.MedianStyle.Color = color.Black
		b.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
		p.Add(b)
	}
	p.NominalX(names...)
	// Half a category of room on either side: the boxes at the ends were
	// cut in half by the plot's edges.
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	return p, nil
}

// iterTicks labels iterations at a round integer step (1, 2, 5, 10, 20,
// …) so that at most maxIterLabels labels show, on multiples of the step,
// with unlabelled ticks at every iteration in between while there are few.
// gonum's default ticker aims at about three labels (2, 6 and 10 on 1…10),
// which left most iterations unlabelled, on some ranges all but the odd
// ones.
type iterTicks struct{}

// maxIterLabels is the most iteration labels iterTicks shows.
const maxIterLabels = 8

func (iterTicks) Ticks(lo, hi float64) []plot.Tick {
	first, last := math.Ceil(lo), math.Floor(hi)
	if last < first {
		return nil
	}
	step := 1.0
	for k := 0.0; (last-first)/step+1 > maxIterLabels; k++ {
		step = []float64{2, 5, 10}[int(k)%3] * math.Pow(10, math.Floor(k/3))
	}
	var ticks []plot.Tick
	minor := last-first <= 60
	for v := first; v <= last; v++ {
		if math.Mod(v, step) == 0 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
		} else if minor {
			ticks = append(ticks, plot.Tick{Value: v})
		}
	}
	return ticks
}

// legendColumn splits the figure canvas c into the plot's part and a
// column on the right for p's legend, top-aligned with the data area (a
// legend inside the data area hid the curves it names). ok is false when
// the legend is empty: the plot then takes the whole canvas.
func legendColumn(p *plot.Plot, c draw.Canvas) (plotArea, legendArea draw.Canvas, ok bool) {
	w := p.Legend.Rectangle(c).Size().X
	if w == 0 {
		return c, draw.Canvas{}, false
	}
	gap := vg.Points(8)
	plotArea = draw.Crop(c, 0, -(w + gap), 0, 0)
	top := vg.Length(0)
	if p.Title.Text != "" {
		top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	legendArea = draw.Crop(c, c.Size().X-w, 0, 0, -top)
	return plotArea, legendArea, true
}

// drawFigure draws p on c with its legend in a column right of the data.
func drawFigure(p *plot.Plot, c draw.Canvas) {
	plotArea, legendArea, ok := legendColumn(p, c)
	if !ok {
		p.Draw(c)
		return
	}
	leg := p.Legend
	p.Legend = plot.NewLegend() // drawn below, outside the data area
	p.Draw(plotArea)
	p.Legend = leg
	leg.Top, leg.Left = true, true
	leg.Draw(legendArea)
}

// savePNG renders p to path through a temporary file.
func savePNG(p *plot.Plot, path string) error {
	c := vgimg.NewWith(vgimg.UseWH(figWidth, figHeight), vgimg.UseDPI(figDPI), vgimg.UseBackgroundColor(color.White))
	drawFigure(p, draw.New(c))
	wt := vgimg.PngCanvas{Canvas: c}
	if err := writeFileAtomic(path, func(f *os.File) error { _, err := wt.WriteTo(f); return err }); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}
