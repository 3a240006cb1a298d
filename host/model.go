package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// dataset is the GP's view of the completed trials: unit-cube inputs and
// standardized outputs, maximizing (the README's conventions):
//
//	y_i = (s·v_i − m) / c,  s = −1 if the objective minimizes else +1,
//
// with m and c the mean and sample standard deviation of s·v (c = 1 when
// fewer than two values or all equal).
type dataset struct {
	X     *mat.Dense // n×d, rows in [0,1]^d, in trial-ID order
	y     []float64  // standardized
	ids   []int      // trial IDs of the rows
	mean  float64    // m
	scale float64    // c
	sign  float64    // s
	// warped: y are ψ_λ((standardized value − m0)/s0), re-standardized
	// (mean wm, standard deviation ws); see warp.
	warped         bool
	lambda, m0, s0 float64
	wm, ws         float64
	// lo, hi bound what native returns: the observed values' range
	// widened by twice its span on each side (bounds).
	lo, hi float64
}

func newDataset(trials []Trial, d int, minimize bool) *dataset {
	ds := &dataset{sign: 1, scale: 1}
	if minimize {
		ds.sign = -1
	}
	var raw []float64
	for _, t := range trials {
		if t.Status.modelled() {
			ds.ids = append(ds.ids, t.ID)
			raw = append(raw, ds.sign*t.Value)
		}
	}
	n := len(raw)
	if n == 0 {
		ds.lo, ds.hi = ds.bounds()
		return ds
	}
	ds.X = mat.NewDense(n, d, nil)
	k := 0
	for _, t := range trials {
		if t.Status.modelled() {
			ds.X.SetRow(k, t.U)
			k++
		}
	}
	ds.standardize(raw)
	return ds
}

// standardize sets y to the raw values standardized (mean 0, sample
// standard deviation 1; scale 1 for fewer than two values or values equal
// to 12 significant digits). The scale is relative: values of order 1e-20
// are standardized like values of order 1. Values whose squared
// deviations overflow (|v| beyond about 1e154) or underflow (below about
// 1e-154) are standardized in units of the largest |v|
// (standardizeScaled).
func (ds *dataset) standardize(raw []float64) {
	n := len(raw)
	var mean, ss float64
	for _, v := range raw {
		mean += v
	}
	mean /= float64(n)
	for _, v := range raw {
		ss += (v - mean) * (v - mean)
	}
	if math.IsInf(mean, 0) || math.IsInf(ss, 0) || ss < 1e-300 && ss > 0 || ss == 0 && !allEqual(raw) {
		ds.standardizeScaled(raw)
		ds.lo, ds.hi = ds.bounds()
		return
	}
	ds.mean = mean
	if sd := math.Sqrt(ss / float64(max(n-1, 1))); n > 1 && sd > 0 && sd > 1e-12*math.Abs(mean) {
		ds.scale = sd
	}
	ds.y = make([]float64, n)
	for i, v := range raw {
		ds.y[i] = (v - ds.mean) / ds.scale
	}
	ds.lo, ds.hi = ds.bounds()
}

// allEqual reports whether every value of v equals the first.
func allEqual(v []float64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

// standardizeScaled is standardize in units of a = max |v|, where every
// intermediate stays finite: m = a·mean(v/a), c = a·sd(v/a) and
// y = (v/a − m/a)/(c/a). Finite raw values have finite m and c.
func (ds *dataset) standardizeScaled(raw []float64) {
	n := len(raw)
	var a float64
	for _, v := range raw {
		a = math.Max(a, math.Abs(v))
	}
	var mean, ss float64 // in units of a
	for _, v := range raw {
		mean += v / a
	}
	mean /= float64(n)
	for _, v := range raw {
		ss += (v/a - mean) * (v/a - mean)
	}
	ds.mean, ds.scale = a*mean, a
	sd := math.Sqrt(ss / float64(max(n-1, 1)))
	if n > 1 && sd > 0 && sd > 1e-12*math.Abs(mean) {
		ds.scale = a * sd
	} else {
		sd = 1
	}
	ds.y = make([]float64, n)
	for i, v := range raw {
		ds.y[i] = (v/a - mean) / sd
	}
}

// dataset returns the GP's view of the study's completed trials, warped
// when the proposer asks for it (acq.OutputWarper) and the noise is not
// fixed (a fixed noise variance is in the objective's units).
func (s *Study) dataset() *dataset {
	ds := newDataset(s.trials, s.space.Dim(), s.info.Minimize)
	if w, ok := s.proposer.(acq.OutputWarper); ok && w.WarpOutputs() && !s.opts.FixNoise {
		ds.warp()
	}
	return ds
}

// warpEvidence is the χ²₁ 95% quantile: the likelihood-ratio threshold
// above which warp rejects λ = 1.
const warpEvidence = 3.841

// warp replaces the values y by ψ_λ((y − m₀)/s₀), re-standardized, with
// ψ_λ the Yeo–Johnson transform (yeoJohnson), m₀ and s₀ the mean and
// standard deviation of the observations and λ ∈ [1, 4] the
// maximum-likelihood value on them. λ > 1 compresses a long lower tail (a
// few very bad values, as of a minimized objective spanning decades), so
// that they do not set the GP's length-scales; λ = 1 is the identity, and
// an upper tail is left alone: compressing it would flatten the peak BO is
// climbing.
//
// λ is fitted to every observation, each iteration. BO's points cluster
// near the maximum, so the values of a study that has found its basin
// look as if they had a lower tail even when the objective has none; the
// warp then compresses the few values far from the basin, which is what
// keeps them from shortening the length-scales there. Fitting λ to the
// initial design alone (the earlier rule) never warped a study opened with
// two points, BoTorch's protocol, and lost to this rule on the tune half
// of the broad suite (docs/results/broad). The values are warped only
// when they reject λ = 1 by a likelihood-ratio test at the 5% level
// (2Δℓ ≥ warpEvidence) and there are at least 3 of them.
func (ds *dataset) warp() {
	n := len(ds.y)
	if n < 3 {
		return
	}
	var m0, ss float64
	for _, v := range ds.y {
		m0 += v
	}
	m0 /= float64(n)
	for _, v := range ds.y {
		ss += (v - m0) * (v - m0)
	}
	s0 := math.Sqrt(ss / float64(n-1))
	if !(s0 > 1e-12) {
		return
	}
	x := make([]float64, n)
	for i, v := range ds.y {
		x[i] = (v - m0) / s0
	}
	lam := fitYeoJohnson(x, 1)
	if 2*(yeoJohnsonLogLik(x, lam)-yeoJohnsonLogLik(x, 1)) < warpEvidence {
		return
	}
	z := make([]float64, len(ds.y))
	var m float64
	for i, v := range ds.y {
		z[i] = yeoJohnson((v-m0)/s0, lam)
		m += z[i]
	}
	m /= float64(len(z))
	ss = 0
	for _, v := range z {
		ss += (v - m) * (v - m)
	}
	sd := math.Sqrt(ss / float64(len(z)-1))
	if !(sd > 1e-12) {
		return
	}
	for i := range z {
		ds.y[i] = (z[i] - m) / sd
	}
	ds.warped, ds.lambda, ds.m0, ds.s0, ds.wm, ds.ws = true, lam, m0, s0, m, sd
}

// bounds is the interval native keeps values in, taken when the values
// are standardized: the observed values' range widened by twice its span
// on each side (by max(1, |hi|) when the span is 0 or overflows; the
// whole float64 range without values). A warp's inverse is infinite
// beyond its image (yeoJohnsonInverse), where a GP mean, or mean ± sd, can
// lie — as on Branin's upper tail —, and c·f + m overflows for values
// near the largest float64; no record, chart or JSON document can carry
// ±Inf. Within the data and well beyond it the map is exact.
func (ds *dataset) bounds() (lo, hi float64) {
	if len(ds.y) == 0 {
		return -math.MaxFloat64, math.MaxFloat64
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, y := range ds.y {
		v := ds.sign * (y*ds.scale + ds.mean)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	w := 2 * (hi - lo)
	if w == 0 || math.IsInf(w, 0) {
		w = math.Max(1, math.Abs(hi))
	}
	return math.Max(lo-w, -math.MaxFloat64), math.Min(hi+w, math.MaxFloat64)
}

func (ds *dataset) n() int { return len(ds.y) }

// best returns the largest standardized value.
func (ds *dataset) best() float64 {
	b := math.Inf(-1)
	for _, v := range ds.y {
		b = math.Max(b, v)
	}
	return b
}

// trials is the number of trials among the rows (a trial's rows are
// consecutive: one each in newDataset, its curve in fidelity.dataset).
func (ds *dataset) trials() int {
	n := 0
	for i, id := range ds.ids {
		if i == 0 || id != ds.ids[i-1] {
			n++
		}
	}
	return n
}

// bestAt is best over the rows whose last input (of d+1, a fidelity) is
// t; best when none is.
func (ds *dataset) bestAt(d int, t float64) float64 {
	b := math.Inf(-1)
	for i, v := range ds.y {
		if ds.X.At(i, d) == t {
			b = math.Max(b, v)
		}
	}
	if math.IsInf(b, -1) {
		return ds.best()
	}
	return b
}

// native maps a standardized value back to the objective's units, within
// [lo, hi] (see bounds).
func (ds *dataset) native(y float64) float64 {
	if ds.warped {
		y = yeoJohnsonInverse(y*ds.ws+ds.wm, ds.lambda)*ds.s0 + ds.m0
	}
	return math.Min(math.Max(ds.sign*(y*ds.scale+ds.mean), ds.lo), ds.hi)
}

// modelState is the fitted GP's hyper-parameters, stored with each
// iteration: the next fit warm-starts from it, also after a resume, which is
// what keeps a resumed study identical to an uninterrupted one.
type modelState struct {
	Kernel   string    `json:"kernel"`
	Params   []float64 `json:"params"` // kernel log hyper-parameters
	Noise    float64   `json:"noise"`  // σ_n², standardized units
	N        int       `json:"n"`      // observations fitted
	Fallback string    `json:"fallback,omitempty"`
	// Warped: the GP was fitted to warped values (dataset.warp), which
	// LoadPosterior must rebuild the same way.
	Warped bool `json:"warped,omitempty"`
	// Local is the number of trials of the local model (ModelLocal), whose
	// hyper-parameters are in its region's coordinates; 0 for the exact
	// model.
	Local int `json:"local,omitempty"`
	// AcqState is what the acquisition carries to the next iteration
	// (acq.Carrier), restored when the study is reopened.
	AcqState json.RawMessage `json:"acq_state,omitempty"`
	// Outputs are the fits of a study with several outputs, one per
	// declared output (sdk.Info.Outputs); the fields above other than N,
	// Fallback and AcqState are then unset.
	Outputs []modelState `json:"outputs,omitempty"`
	// Cut holds the unit-cube points of the iteration's batch that the
	// evaluation budget left out (AutoBatch: the acquisition sized the
	// batch beyond it), from batch index CutFrom on; a study whose budget
	// grows (resume --iters) issues them before proposing again.
	Cut     [][]float64 `json:"cut,omitempty"`
	CutFrom int         `json:"cut_from,omitempty"`
	fitS    float64     // seconds this output's fit took (not stored)
}

// FallbackReason returns why a stored iteration (store.Iteration.Model)
// proposed space-filling random points instead of the acquisition's, or ""
// when it did not (or stored no model).
func FallbackReason(model []byte) (string, error) {
	if len(model) == 0 {
		return "", nil
	}
	var ms modelState
	if err := json.Unmarshal(model, &ms); err != nil {
		return "", fmt.Errorf("bad stored model: %w", err)
	}
	return ms.Fallback, nil
}

// newKernel returns the kernel family's starting kernel on d coordinates:
// gp.Mixed (the family's kernel on the continuous coordinates times an
// overlap kernel on the categorical ones) when cats marks a categorical
// coordinate (Space.Categories), else the family's ARD kernel.
func newKernel(family string, d int, cats ...int) gp.Kernel {
	ls := make([]float64, d)
	for i := range ls {
		ls[i] = 0.5
	}
	if len(cats) == d {
		return gp.NewMixed(cats, family == KernelMatern52, ls, 1)
	}
	if family == KernelMatern52 {
		return gp.NewMatern52(ls, 1)
	}
	return gp.NewSE(ls, 1)
}

// warmGP rebuilds a GP carrying ms's hyper-parameters (on a one-point
// dummy data set: FitSettings.Warm reads only the hyper-parameters).
func (ms *modelState) warmGP(d int, cats []int) (*gp.GP, error) {
	if ms == nil || len(ms.Params) != d+1 {
		return nil, nil
	}
	k := newKernel(ms.Kernel, d, cats...).WithParams(ms.Params)
	x := make([]float64, d)
	for i := range x {
		x[i] = 0.5
	}
	return gp.New(k, ms.Noise, mat.NewDense(1, d, x), []float64{0})
}

// fitResult is one fitted model and what it cost.
type fitResult struct {
	gp      *gp.GP
	state   *modelState
	seconds float64
}

// fitModel fits the GP to ds by MAP with warm start from warm (Fit's
// restarts drawn from the (seed, iteration) fit stream). It stops, with an
// error wrapping ctx's, when ctx is done.
func (s *Study) fitModel(ctx context.Context, ds *dataset, warm *modelState, iteration int) (*fitResult, error) {
	t0 := time.Now()
	d, cats := s.space.Dim(), s.space.Categories()
	if s.mf != nil && cats != nil {
		cats = append(cats, 0) // the fidelity t is continuous
	}
	if s.mf != nil {
		d++
	}
	fs := gp.FitSettings{
		Kernel: newKernel(s.opts.Kernel, d, cats...),
		Rand:   streamRand(s.seed, iteration, streamFit),
	}
	if w, err := warm.warmGP(d, cats); err == nil && w != nil && warm.Kernel == s.opts.Kernel {
		fs.Warm = w
	}
	if s.opts.GPPrior == PriorScaled {
		p := gp.ScaledPrior(d)
		fs.Prior = &p
	}
	if s.opts.FixNoise {
		b := gp.DefaultBounds()
		nv := s.opts.NoiseVar / (ds.scale * ds.scale)
		fs.FixedNoise = math.Min(math.Max(nv, b.Noise[0]), b.Noise[1])
	}
	fit := func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error) {
		return gp.FitContext(ctx, X, y, fs)
	}
	if s.hooks != nil && s.hooks.gpFit != nil {
		fit = s.hooks.gpFit
	}
	g, err := fit(ds.X, ds.y, fs)
	if err != nil {
		return nil, fmt.Errorf("fit gp on %d points: %w", ds.n(), err)
	}
	return &fitResult{
		gp:      g,
		state:   &modelState{Kernel: s.opts.Kernel, Params: g.Kernel().Params(), Noise: g.NoiseVar(), N: ds.n(), Warped: ds.warped},
		seconds: time.Since(t0).Seconds(),
	}, nil
}
