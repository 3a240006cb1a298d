package tes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// TrustedSettings controls the search for the trusted maximizers X*
// (§4: maximizers of whole-function posterior samples, as in PES). The zero
// value is the default.
type TrustedSettings struct {
	// Features is the number of random Fourier features per sample path.
	// Zero means 1000.
	Features int
	// Optimize configures the maximization of each sample path. Zero fields
	// default to 128 raw samples, 2 restarts from them and 50 L-BFGS-B
	// iterations, plus the starts listed in TrustedMaximizers.
	Optimize acq.OptimizeSettings
	// DedupDistance is the distance, in length-scale units, under which two
	// maximizers count as the same point (the later one is dropped and a
	// replacement path is drawn). Zero means 1e-3 (their f values then
	// correlate above 1 − 5e-7).
	DedupDistance float64
	// ExtraRounds bounds how many times replacement paths are drawn for
	// dropped duplicates. Zero means 2.
	ExtraRounds int
	// BestStarts is the number of observed inputs (those with the largest
	// y) and, separately, of last iteration's maximizers (those where the
	// path is highest) used as starts for each path. Zero means 3.
	BestStarts int
}

func (s TrustedSettings) withDefaults() TrustedSettings {
	if s.Features <= 0 {
		s.Features = 1000
	}
	if s.Optimize.RawSamples <= 0 {
		s.Optimize.RawSamples = 128
	}
	if s.Optimize.Restarts <= 0 {
		s.Optimize.Restarts = 2
	}
	if s.Optimize.MaxIter <= 0 {
		s.Optimize.MaxIter = 50
	}
	if s.DedupDistance <= 0 {
		s.DedupDistance = 1e-3
	}
	if s.ExtraRounds <= 0 {
		s.ExtraRounds = 2
	}
	if s.BestStarts <= 0 {
		s.BestStarts = 3
	}
	return s
}

// pathFunc adapts a sample path to acq.Func (q = 1) with its gradient and
// suggested starts.
type pathFunc struct {
	p      *gp.Path
	starts []*mat.Dense
}

func (f *pathFunc) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	if grad == nil {
		return f.p.Eval(x)
	}
	return f.p.Grad(x, grad.RawRowView(0))
}

func (f *pathFunc) HasGradient() bool { return true }

func (f *pathFunc) Starts(int) []*mat.Dense { return f.starts }

// TrustedMaximizers draws k whole-function posterior samples (gp.SamplePaths)
// and maximizes each over [0,1]^d with acq.Maximize, starting from the
// space-filling raw samples' best, from the BestStarts observed inputs
// with the largest y and from the BestStarts points of prev (last
// iteration's X*) where the path is highest. Maximizers
// closer than DedupDistance length-scales to an earlier one are dropped and
// replaced by new paths (at most ExtraRounds times), so the result has at
// most k rows and at least one.
func TrustedMaximizers(ctx context.Context, g *gp.GP, rng *rand.Rand, k int, prev *mat.Dense, s TrustedSettings) (*mat.Dense, error) {
	if k < 1 {
		return nil, fmt.Errorf("tes: need at least one trusted maximizer, got %d", k)
	}
	s = s.withDefaults()
	d := g.Dim()
	ell := lengthscales(g.Kernel())
	var kept [][]float64
	want := k
	best := bestObserved(g, s.BestStarts)
	for round := 0; round <= s.ExtraRounds && want > 0; round++ {
		paths, err := g.SamplePaths(rng, want, s.Features)
		if err != nil {
			return nil, fmt.Errorf("tes: sample paths: %w", err)
		}
		for _, p := range paths {
			f := &pathFunc{p: p, starts: pathStarts(p, best, prev, s.BestStarts)}
			x, _, err := acq.Maximize(ctx, f, 1, d, s.Optimize, rng)
			if err != nil {
				return nil, fmt.Errorf("tes: maximize sample path: %w", err)
			}
			xr := x.RawRowView(0)
			dup := false
			for _, y := range kept {
				if scaledDist(xr, y, ell) < s.DedupDistance {
					dup = true
					break
				}
			}
			if !dup {
				kept = append(kept, append([]float64(nil), xr...))
			}
		}
		want = k - len(kept)
	}
	out := mat.NewDense(len(kept), d, nil)
	for i, x := range kept {
		out.SetRow(i, x)
	}
	return out, nil
}

// pathStarts returns the starts for maximizing one path: the given best
// observed inputs and the nb points of the previous X* where the path is
// highest.
func pathStarts(p *gp.Path, best []*mat.Dense, prev *mat.Dense, nb int) []*mat.Dense {
	out := append([]*mat.Dense(nil), best...)
	if prev == nil {
		return out
	}
	n, d := prev.Dims()
	idx := make([]int, n)
	vals := make([]float64, n)
	for i := 0; i < n; i++ {
		idx[i] = i
		vals[i] = p.Eval(prev.RawRowView(i))
	}
	sort.Slice(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	for _, i := range idx[:min(nb, n)] {
		out = append(out, mat.NewDense(1, d, append([]float64(nil), prev.RawRowView(i)...)))
	}
	return out
}

// bestObserved returns the nb observed inputs with the largest y.
func bestObserved(g *gp.GP, nb int) []*mat.Dense {
	X, y := g.X(), g.Y()
	n, d := X.Dims()
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return y[idx[a]] > y[idx[b]] })
	var out []*mat.Dense
	for _, i := range idx[:min(nb, n)] {
		out = append(out, mat.NewDense(1, d, append([]float64(nil), X.RawRowView(i)...)))
	}
	return out
}

// lengthscales returns the kernel's length-scales from its log parameters
// [log ℓ_1..log ℓ_d, log σ_s²].
func lengthscales(k gp.Kernel) []float64 {
	p := k.Params()
	out := make([]float64, k.Dim())
	for i := range out {
		out[i] = math.Exp(p[i])
	}
	return out
}

func scaledDist(x, y, ell []float64) float64 {
	s := 0.0
	for i := range x {
		d := (x[i] - y[i]) / ell[i]
		s += d * d
	}
	return math.Sqrt(s)
}
