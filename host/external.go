package host

import (
	"context"
	"fmt"
	"math"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
)

// posterior is the sdk.Posterior view of one iteration's GP (unit-cube
// inputs, standardized outputs) handed to acquisition plugins and scripts.
type posterior struct {
	g    *gp.GP
	best float64
}

// NewPosterior returns the sdk.Posterior view of g with incumbent best
// (the largest standardized observation).
func NewPosterior(g *gp.GP, best float64) sdk.Posterior { return posterior{g: g, best: best} }

func (p posterior) Dim() int                               { return p.g.Dim() }
func (p posterior) MeanVar(x []float64) (float64, float64) { return p.g.MeanVar(x) }
func (p posterior) NoiseVar() float64                      { return p.g.NoiseVar() }
func (p posterior) Incumbent() float64                     { return p.best }

// Categories implements sdk.Categorized: the choices per coordinate of the
// GP's mixed kernel, nil on a continuous space.
func (p posterior) Categories() []int { return acq.CategoriesOf(p.g) }

func (p posterior) MeanCov(points [][]float64) ([]float64, [][]float64) {
	if len(points) == 0 {
		return nil, nil
	}
	X := mat.NewDense(len(points), p.g.Dim(), nil)
	for i, x := range points {
		X.SetRow(i, x)
	}
	mean, cov := p.g.Joint(X)
	out := make([][]float64, len(points))
	for i := range out {
		out[i] = make([]float64, len(points))
		for j := range out[i] {
			out[i][j] = cov.At(i, j)
		}
	}
	return mean, out
}

func (p posterior) Observations() []sdk.Observation {
	X, y := p.g.X(), p.g.Y()
	out := make([]sdk.Observation, len(y))
	for i := range y {
		out[i] = sdk.Observation{X: mat.Row(nil, i, X), Value: y[i]}
	}
	return out
}

// AcquisitionProposer turns an acquisition-function plugin or script
// (sdk.Acquisition: α(batch) given the posterior) into a Proposer: each
// iteration binds the posterior and maximizes α jointly over the batch with
// acq.Maximize (finite-difference gradients). Scores that fail count as
// −∞; the proposal fails only when every score failed.
func AcquisitionProposer(a sdk.Acquisition, s acq.OptimizeSettings) acq.Proposer {
	return scoredProposer{sc: acqScorer{a}, set: s}
}

type acqScorer struct{ a sdk.Acquisition }

func (sc acqScorer) Prepare(ctx context.Context, s *acq.State, q int) (acq.Func, error) {
	return &acqFunc{ctx: ctx, a: sc.a, p: NewPosterior(s.GP, s.Best)}, nil
}

type acqFunc struct {
	ctx  context.Context
	a    sdk.Acquisition
	p    sdk.Posterior
	mu   sync.Mutex
	ok   bool
	errs int
	err  error
}

func (f *acqFunc) Eval(X, _ *mat.Dense) float64 {
	r, _ := X.Dims()
	batch := make([][]float64, r)
	for i := range batch {
		batch[i] = mat.Row(nil, i, X)
		for j, v := range batch[i] { // the optimizer may step a hair outside
			batch[i][j] = clamp01(v)
		}
	}
	v, err := f.a.Score(f.ctx, f.p, batch)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && !math.IsNaN(v) {
		f.ok = true
		return v
	}
	if err == nil {
		err = fmt.Errorf("score is NaN")
	}
	f.errs++
	if f.err == nil {
		f.err = err
	}
	return math.Inf(-1)
}

// propose maximizes the plugin's score and reports a plugin that never
// scored successfully.
func (sc acqScorer) propose(ctx context.Context, s *acq.State, q int, set acq.OptimizeSettings) (*mat.Dense, error) {
	f, _ := sc.Prepare(ctx, s, q)
	X, _, err := acq.MaximizeMixed(ctx, acq.FeasibilityWeighted(f, s), q, s.Dim(), acq.CategoriesOf(s.GP), s.Pin(set), s.Rand)
	af := f.(*acqFunc)
	if err == nil && !af.ok {
		err = fmt.Errorf("every score failed (%d), first: %w", af.errs, af.err)
	}
	return X, err
}

// scoredProposer is AcquisitionProposer's Proposer.
type scoredProposer struct {
	sc  acqScorer
	set acq.OptimizeSettings
}

func (p scoredProposer) Propose(ctx context.Context, s *acq.State, q int) (*mat.Dense, error) {
	return p.sc.propose(ctx, s, q, p.set)
}

// suggest asks the study's suggester (Options.Suggester, a
// batch-proposing plugin) for the q points of iteration t. It hands the
// plugin the history in native units (a SuggestRequest) and maps the
// points it returns into the unit cube.
func (s *Study) suggest(ctx context.Context, t, q int) (*mat.Dense, error) {
	req := sdk.SuggestRequest{Objective: s.info, Count: q, Iter: t, Seed: iterationSeed(s.seed, t)}
	for _, tr := range s.trials {
		switch {
		case tr.Status == Complete:
			req.History = append(req.History, sdk.Observation{X: append([]float64(nil), tr.X...), Value: tr.Value, Outputs: tr.Outputs})
		case !tr.Status.Done():
			req.Pending = append(req.Pending, append([]float64(nil), tr.X...))
		}
	}
	pts, err := s.opts.Suggester.Suggest(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(pts) != q {
		return nil, fmt.Errorf("suggester returned %d points, want %d", len(pts), q)
	}
	X := mat.NewDense(q, s.space.Dim(), nil)
	for i, x := range pts {
		u, err := s.space.ToUnit(roundInts(s.space, x))
		if err != nil {
			return nil, fmt.Errorf("suggested point %d: %w", i, err)
		}
		X.SetRow(i, u)
	}
	return X, nil
}

// roundInts rounds the Int and Categorical coordinates of a native point (a suggester may
// return 3.0000001).
func roundInts(sp *Space, x []float64) []float64 {
	out := append([]float64(nil), x...)
	for i, p := range sp.params {
		if (p.Kind == sdk.Int || p.Kind == sdk.Categorical) && i < len(out) {
			out[i] = math.Round(out[i])
		}
	}
	return out
}
