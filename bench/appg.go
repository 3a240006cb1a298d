package bench

import (
	"context"
	"encoding/csv"
	"fmt"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/samplemv"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/tes"
)

// Appendix G outputs in Suite.Out.
const (
	BatchCurveFile    = "appg.csv"
	BatchCurveSummary = "appg.md"
)

// defaultBatchCurveTrusted is |X*| of the Appendix G diagnostic (Fig. 11:
// "TES_ep against the batch size for n = 5").
const defaultBatchCurveTrusted = 5

// batchCurvePoint is the maximized TES_ep value of one batch size on one
// fitted model.
type batchCurvePoint struct {
	Problem string
	Seed    int // seed index
	N       int // observations the GP was fitted on
	Batch   int // |B|
	// Alpha is α(B̂) at the maximizing batch B̂, re-estimated with fresh
	// Monte-Carlo base samples (so the maximization's selection bias does
	// not inflate it), and AlphaSE its standard error (0 for quadrature);
	// see tes.Model.BatchGains.
	Alpha, AlphaSE float64
	// Fitted is α(B̂) on the base samples it was maximized on (biased
	// upward where α is a Monte-Carlo estimate; not written to appg.csv).
	Fitted float64
	// Entropy is H(x*) over X* (nats), the upper bound of α.
	Entropy float64
	Seconds float64 // time to maximize α for this batch size
}

// BatchCurve computes the paper's Appendix G diagnostic: for each problem
// and seed it evaluates a Latin-hypercube design of Suite.Init points (0 → 2;
// set it to the data size wanted), fits the GP (Suite.Kernel), builds one TES_ep
// model with |X*| = Suite.Trusted (0 → 5) and maximizes α over batches of
// every size in Suite.Batches, the same model for all sizes (α is the
// information gain about x* ∈ X*, so values are comparable across sizes),
// reporting each maximum re-estimated with fresh base samples
// (tes.Model.BatchGains).
// It writes appg.csv, appg.md and appg_<problem>.png (mean α ± 1 standard
// error over seeds against |B|, with H(x*) as the ceiling) to Suite.Out.
// Seeds run Suite.Jobs at a time; Iters and Acquisitions are ignored.
func BatchCurve(ctx context.Context, s Suite) ([]batchCurvePoint, error) {
	start := time.Now()
	if len(s.Acquisitions) == 0 {
		s.Acquisitions = []string{"tes-ep"}
	}
	params, unlock, err := s.prepare(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	type job struct {
		p     Problem
		index int
	}
	var jobs []job
	for _, p := range s.Problems {
		for i := range s.seeds() {
			jobs = append(jobs, job{p, i})
		}
	}
	r := &runner{s: &s, locks: map[string]*sync.Mutex{}}
	results := make([][]batchCurvePoint, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, s.jobs())
	for j, jb := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[j], errs[j] = s.batchCurveOne(ctx, jb.p, jb.index, params[jb.p.Label()], r.lock)
			if errs[j] != nil {
				s.Logger.Error().Err(errs[j]).Str("problem", jb.p.Label()).Int("seed", jb.index).Msg("batch curve failed")
			} else {
				s.Logger.Info().Str("problem", jb.p.Label()).Int("seed", jb.index).Msg("batch curve finished")
			}
		}()
	}
	wg.Wait()
	var pts []batchCurvePoint
	var failures []string
	for j, r := range results {
		pts = append(pts, r...)
		if errs[j] != nil {
			failures = append(failures, fmt.Sprintf("%s seed %d: %v", jobs[j].p.Label(), jobs[j].index, errs[j]))
		}
	}
	if err := writeBatchCurve(&s, pts, failures, time.Since(start)); err != nil {
		return pts, err
	}
	if ctx.Err() != nil {
		return pts, fmt.Errorf("batch curve interrupted: %w", context.Cause(ctx))
	}
	if len(pts) == 0 && len(failures) > 0 {
		return pts, fmt.Errorf("every batch curve failed; first: %s", failures[0])
	}
	return pts, nil
}

func (s *Suite) batchCurveOne(ctx context.Context, p Problem, index int, params map[string]string, lock func(string) *sync.Mutex) ([]batchCurvePoint, error) {
	seed := seed(p.Label(), "appg", 0, index)
	spec := runSpec{Problem: p, Acquisition: "tes-ep", Batch: 1, Index: index, Seed: seed}
	o := s.studyOptions(spec, params)
	obj, exclusive, err := s.opener()(ctx, p.Name)
	if err != nil {
		return nil, err
	}
	if exclusive {
		l := lock(p.Name)
		l.Lock()
		defer l.Unlock()
	}
	if err := host.ConfigureObjective(ctx, obj, p.Name, o); err != nil {
		return nil, err
	}
	info, err := obj.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("objective info: %w", err)
	}
	space, err := host.NewSpace(info.Params)
	if err != nil {
		return nil, err
	}
	d := space.Dim()
	n := max(s.initFor(1), 2)
	rng := rand.New(rand.NewPCG(seed, 0x61707067)) // "appg"
	X := latinHypercube(n, d, rng)
	y := make([]float64, n)
	for i := range n {
		v, err := obj.Evaluate(ctx, space.ToNative(X.RawRowView(i)))
		if err != nil {
			return nil, fmt.Errorf("evaluate design point %d: %w", i, err)
		}
		if info.Minimize {
			v = -v
		}
		y[i] = v
	}
	standardize(y)
	fs := gp.FitSettings{Rand: rng}
	if s.Kernel == host.KernelMatern52 {
		ls := make([]float64, d)
		for i := range ls {
			ls[i] = 0.5
		}
		fs.Kernel = gp.NewMatern52(ls, 1)
	}
	g, err := gp.Fit(X, y, fs)
	if err != nil {
		return nil, fmt.Errorf("fit gp: %w", err)
	}
	k := s.Trusted
	if k == 0 {
		k = defaultBatchCurveTrusted
	}
	m, err := tes.NewModel(ctx, g, rng, k, nil, tes.Settings{Method: tes.EP, Trusted: k})
	if err != nil {
		return nil, fmt.Errorf("tes model: %w", err)
	}
	opt := acq.OptimizeSettings{Workers: max(1, s.acqOptions().Optimize.Workers)}
	gains, err := m.BatchGains(ctx, s.batches(), opt, rng)
	pts := make([]batchCurvePoint, len(gains))
	for i, r := range gains {
		pts[i] = batchCurvePoint{Problem: p.Label(), Seed: index, N: n, Batch: r.B, Alpha: r.Alpha, AlphaSE: r.SE,
			Fitted: r.Fitted, Entropy: m.Entropy(), Seconds: r.Seconds}
	}
	if err != nil {
		return pts, fmt.Errorf("batch gains: %w", err)
	}
	return pts, nil
}

// latinHypercube returns n points in [0,1]^d, one per row, by gonum's
// Latin hypercube sampling (the host's initial design draws its points the
// same way).
func latinHypercube(n, d int, rng *rand.Rand) *mat.Dense {
	X := mat.NewDense(n, d, nil)
	src := rand.NewPCG(rng.Uint64(), rng.Uint64())
	samplemv.LatinHypercube{Q: distmv.NewUnitUniform(d, nil), Src: src}.Sample(X)
	return X
}

// standardize maps y to zero mean and unit sample standard deviation in
// place (the host's output convention).
func standardize(y []float64) {
	m := mean(y)
	sd := stdErr(y) * math.Sqrt(float64(len(y)))
	if math.IsNaN(sd) || sd < 1e-12 {
		sd = 1
	}
	for i := range y {
		y[i] = (y[i] - m) / sd
	}
}

func writeBatchCurve(s *Suite, pts []batchCurvePoint, failures []string, wall time.Duration) error {
	p := filepath.Join(s.Out, BatchCurveFile)
	err := writeFileAtomic(p, func(f *os.File) error {
		w := csv.NewWriter(f)
		w.Write([]string{"problem", "seed", "n", "batch", "alpha", "alpha_se", "entropy", "seconds"})
		for _, pt := range pts {
			w.Write([]string{pt.Problem, strconv.Itoa(pt.Seed), strconv.Itoa(pt.N), strconv.Itoa(pt.Batch),
				fmtFloat(pt.Alpha), fmtFloat(pt.AlphaSE), fmtFloat(pt.Entropy), fmtFloat(pt.Seconds)})
		}
		w.Flush()
		return w.Error()
	})
	if err != nil {
		return fmt.Errorf("write %s: %w", BatchCurveFile, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# TES_ep value against the batch size (Appendix G)\n\n")
	if s.Command != "" {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", s.Command)
	}
	k := s.Trusted
	if k == 0 {
		k = defaultBatchCurveTrusted
	}
	fmt.Fprintf(&b, "|X*| = %d; GP fitted on %d Latin-hypercube points per seed; %d seed(s); wall time %s.\n",
		k, max(s.initFor(1), 2), s.seeds(), wall.Round(time.Second))
	fmt.Fprintf(&b, "α is re-estimated at the maximizing batch with fresh base samples; mean ± standard error over seeds (nats).\n")
	for _, prob := range s.Problems {
		label := prob.Label()
		fmt.Fprintf(&b, "\n## %s\n\n| |B| | seeds | mean α | SE | mean H(x*) | median seconds |\n|---|---|---|---|---|---|\n", label)
		var xs, ms, ses []float64
		var ent []float64
		for _, q := range s.batches() {
			var as, hs, secs []float64
			for _, pt := range pts {
				if pt.Problem == label && pt.Batch == q {
					as, hs, secs = append(as, pt.Alpha), append(hs, pt.Entropy), append(secs, pt.Seconds)
				}
			}
			if len(as) == 0 {
				continue
			}
			fmt.Fprintf(&b, "| %d | %d | %.4f | %s | %.4f | %s |\n", q, len(as), mean(as), fmtStat(stdErr(as), 4), mean(hs), fmtSecs(median(secs)))
			xs, ms, ses = append(xs, float64(q)), append(ms, mean(as)), append(ses, stdErr(as))
			ent = append(ent, mean(hs))
		}
		if len(xs) == 0 {
			continue
		}
		pl, err := batchCurvePlot(label, k, xs, ms, ses, mean(ent))
		if err != nil {
			return err
		}
		name := fmt.Sprintf("appg_%s.png", slug(label))
		if err := savePNG(pl, filepath.Join(s.Out, name)); err != nil {
			return err
		}
		fmt.Fprintf(&b, "\n![TES_ep vs batch size](%s)\n", name)
	}
	if len(failures) > 0 {
		fmt.Fprintf(&b, "\n## Failures\n\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "- %s\n", oneLine(f))
		}
	}
	p = filepath.Join(s.Out, BatchCurveSummary)
	return writeFileAtomic(p, func(f *os.File) error { _, err := f.WriteString(b.String()); return err })
}

// batchCurvePlot draws Fig. 11: mean maximized α against |B| with a ±1 SE
// band, the mean entropy H(x*) (α's ceiling) dashed, and |B| = |X*| marked.
func batchCurvePlot(label string, k int, xs, ms, ses []float64, entropy float64) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: maximized TES_ep, |X*| = %d", label, k)
	p.X.Label.Text = "batch size |B|"
	p.Y.Label.Text = "max α (nats)"
	p.Add(plotter.NewGrid())
	col := acqColors["tes-ep"]
	line := make(plotter.XYs, len(xs))
	var lo, hi plotter.XYs
	for i := range xs {
		line[i] = plotter.XY{X: xs[i], Y: ms[i]}
		se := ses[i]
		if math.IsNaN(se) {
			se = 0
		}
		lo = append(lo, plotter.XY{X: xs[i], Y: ms[i] - se})
		hi = append([]plotter.XY{{X: xs[i], Y: ms[i] + se}}, hi...)
	}
	if len(xs) > 1 {
		poly, err := plotter.NewPolygon(append(lo, hi...))
		if err != nil {
			return nil, err
		}
		poly.Color = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0x40} // non-premultiplied: translucent fill
		poly.LineStyle.Width = 0
		p.Add(poly)
	}
	l, sc, err := plotter.NewLinePoints(line)
	if err != nil {
		return nil, err
	}
	l.Color, sc.Color = col, col
	l.Width = vg.Points(1.5)
	p.Add(l, sc)
	p.Legend.Add("TES_ep", l, sc)
	ceil, err := plotter.NewLine(plotter.XYs{{X: xs[0], Y: entropy}, {X: xs[len(xs)-1], Y: entropy}})
	if err != nil {
		return nil, err
	}
	ceil.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	ceil.Color = color.Gray{Y: 0x60}
	p.Add(ceil)
	p.Legend.Add("H(x*)", ceil)
	mark, err := plotter.NewLine(plotter.XYs{{X: float64(k), Y: 0}, {X: float64(k), Y: entropy}})
	if err != nil {
		return nil, err
	}
	mark.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
	mark.Color = color.Gray{Y: 0x90}
	p.Add(mark)
	p.Legend.Add("|B| = |X*|", mark)
	p.Legend.Top = false
	p.Legend.Left = false
	p.Y.Min = 0
	p.Y.Max = math.Max(p.Y.Max, 1.1*entropy) // keep the ceiling off the title
	return p, nil
}
