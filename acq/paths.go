package acq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// PathDefaults fills the zero RawSamples, Restarts and MaxIter of s with the
// inner-optimizer defaults for maximizing one whole-function sample: 128,
// 10 and 50 (pathMaxima here, tes.trustedSettings for TES's trusted
// maximizers). Paths are cheap to evaluate, so local searches from 10 of
// 128 space-filling points cost little, while with 3 restarts from 256
// points the search missed the global maximum of a fifth to a third of the
// paths once the data sat on a local mode (Hartmann-4), biasing MES's
// max-values low and PES's and Thompson's x* samples towards that mode.
func PathDefaults(s OptimizeSettings) OptimizeSettings {
	if s.RawSamples <= 0 {
		s.RawSamples = 128
	}
	if s.Restarts <= 0 {
		s.Restarts = 10
	}
	if s.MaxIter <= 0 {
		s.MaxIter = 50
	}
	return s
}

// PathFunc adapts a posterior sample path to a q = 1 Func with its
// gradient, suggesting starts (each 1×d) to Maximize. Maximize copies the
// starts, so they may be shared.
func PathFunc(p *gp.Path, starts []*mat.Dense) Func {
	return &pathFunc{p: p, starts: starts}
}

type pathFunc struct {
	p      *gp.Path
	starts []*mat.Dense
}

func (f *pathFunc) HasGradient() bool { return true }

func (f *pathFunc) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	if grad == nil {
		return f.p.Eval(x)
	}
	return f.p.Grad(x, grad.RawRowView(0))
}

func (f *pathFunc) Starts(q int) []*mat.Dense {
	if q != 1 {
		return nil
	}
	return f.starts
}

// bestInputStart returns, as the one start for maximizing p, the training
// input (row of X) where p is largest; nil when X is nil or empty.
func bestInputStart(p *gp.Path, X *mat.Dense) []*mat.Dense {
	if X == nil {
		return nil
	}
	var start []float64
	n, _ := X.Dims()
	best := math.Inf(-1)
	for i := 0; i < n; i++ {
		if v := p.Eval(X.RawRowView(i)); v > best {
			best, start = v, X.RawRowView(i)
		}
	}
	if start == nil {
		return nil
	}
	return []*mat.Dense{mat.NewDense(1, len(start), append([]float64(nil), start...))}
}

// pathMaxima draws n approximate whole-function posterior samples of f from
// g (gp.SamplePaths with the given number of random Fourier features) and
// maximizes each over [0,1]^d with Maximize (settings PathDefaults(s), plus
// the training input where the sample is largest as a start). It returns
// the maximizers x*_k (one per row of the
// n×d result) and the maxima f_k(x*_k): samples of the global maximizer and
// maximum, as PES (Hernández-Lobato et al. 2014), MES (Wang & Jegelka 2017)
// and Thompson sampling use them.
func pathMaxima(ctx context.Context, g *gp.GP, n, features int, s OptimizeSettings, rng *rand.Rand) (*mat.Dense, []float64, error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("path maxima: need at least one sample, got %d", n)
	}
	s = PathDefaults(s)
	paths, err := g.SamplePaths(rng, n, features)
	if err != nil {
		return nil, nil, fmt.Errorf("sample posterior paths: %w", err)
	}
	d := g.Dim()
	X := mat.NewDense(n, d, nil)
	vals := make([]float64, n)
	for k, p := range paths {
		x, v, err := MaximizeMixed(ctx, PathFunc(p, bestInputStart(p, g.X())), 1, d, CategoriesOf(g), s, rng)
		if err != nil {
			return nil, nil, fmt.Errorf("maximize posterior sample %d: %w", k+1, err)
		}
		X.SetRow(k, x.RawRowView(0))
		vals[k] = v
	}
	return X, vals, nil
}

// thompson is batch Thompson sampling (Thompson 1933; for GP-BO batches,
// e.g. Kandasamy et al. 2018): each batch member is the maximizer of an
// independent whole-function posterior sample (pathMaxima). Pending points
// are ignored: independent samples already diversify the batch.
type thompson struct {
	Features int              // random Fourier features per sample (0: 1000)
	Settings OptimizeSettings // path maximization (zero: see pathMaxima)
}

// PathSamples implements PathSampler: one path per batch point.
func (t thompson) PathSamples(q int) (paths, features int) { return q, orDefault(t.Features, 1000) }

// Propose implements Proposer.
func (t thompson) Propose(ctx context.Context, s *State, q int) (*mat.Dense, error) {
	if err := checkState(s, q); err != nil {
		return nil, err
	}
	X, _, err := pathMaxima(ctx, s.GP, q, orDefault(t.Features, 1000), s.Pin(t.Settings), s.Rand)
	if err != nil {
		return nil, fmt.Errorf("thompson sampling: %w", err)
	}
	return X, nil
}

// random proposes q points drawn uniformly from [0,1]^d (random search, the
// floor every acquisition must beat).
type random struct{}

// Propose implements Proposer.
func (random) Propose(_ context.Context, s *State, q int) (*mat.Dense, error) {
	if s == nil || s.Rand == nil || s.GP == nil {
		return nil, fmt.Errorf("random search: state needs a GP (for the dimension) and a random stream")
	}
	if q < 1 {
		return nil, fmt.Errorf("batch size %d: must be at least 1", q)
	}
	d := s.Dim()
	X := mat.NewDense(q, d, nil)
	for i := range X.RawMatrix().Data {
		X.RawMatrix().Data[i] = s.Rand.Float64()
	}
	return X, nil
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}
