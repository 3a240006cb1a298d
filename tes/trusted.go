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

// trustedSettings controls the search for the trusted maximizers X*
// (§4: maximizers of whole-function posterior samples, as in PES). The zero
// value is the default.
type trustedSettings struct {
	// Features is the number of random Fourier features per sample path.
	// Zero means 1000.
	Features int
	// Optimize configures the maximization of each sample path. Zero fields
	// default to 128 raw samples, 10 restarts from the best of them and 50
	// L-BFGS-B iterations, plus the starts listed in trustedMaximizers.
	// Restarts are cheap next to scoring raw samples, and with one restart
	// the search missed the global maximum of many paths once the data sat
	// on a local mode, which concentrated X* on that mode and stalled TES
	// there; more restarts cut both (docs/results/README.md, "Measurements behind the code").
	Optimize acq.OptimizeSettings
	// DedupDistance is the distance, in length-scale units, under which two
	// maximizers count as the same point (the later one is dropped and a
	// replacement path is drawn). Zero means 1e-3 (their f values then
	// correlate above 1 − 5e-7).
	DedupDistance float64
	// ExtraRounds bounds how many times replacement paths are drawn for
	// dropped duplicates. Zero means 2.
	ExtraRounds int
	// Candidates is the number of observed inputs (those with the largest
	// y) that, with every point of last iteration's X*, are candidate
	// starts. Zero means 5.
	Candidates int
	// Starts is the number of candidates (those where the path is highest)
	// from which each path is searched, besides the best raw sample. Zero
	// means 2.
	Starts int
}

func (s trustedSettings) withDefaults() trustedSettings {
	if s.Features <= 0 {
		s.Features = 1000
	}
	s.Optimize = acq.PathDefaults(s.Optimize)
	if s.DedupDistance <= 0 {
		s.DedupDistance = 1e-3
	}
	if s.ExtraRounds <= 0 {
		s.ExtraRounds = 2
	}
	if s.Candidates <= 0 {
		s.Candidates = 5
	}
	if s.Starts <= 0 {
		s.Starts = 2
	}
	return s
}

// trustedMaximizers draws k whole-function posterior samples (gp.SamplePaths)
// and maximizes each over [0,1]^d with acq.Maximize, starting from the
// best space-filling raw sample and from the Starts best (by the path's
// value) of the candidates: the observed inputs with the largest y and the
// points of prev (last iteration's X*). Maximizers
// closer than DedupDistance length-scales to an earlier one are dropped and
// replaced by new paths (at most ExtraRounds times), so the result has at
// most k rows and at least one.
func trustedMaximizers(ctx context.Context, g *gp.GP, rng *rand.Rand, k int, prev *mat.Dense, s trustedSettings) (*mat.Dense, error) {
	if k < 1 {
		return nil, fmt.Errorf("tes: need at least one trusted maximizer, got %d", k)
	}
	s = s.withDefaults()
	d := g.Dim()
	ell := lengthscales(g.Kernel())
	var kept [][]float64
	want := k
	cands := bestObserved(g, s.Candidates)
	if prev != nil {
		n, d := prev.Dims()
		for i := 0; i < n; i++ {
			cands = append(cands, mat.NewDense(1, d, append([]float64(nil), prev.RawRowView(i)...)))
		}
	}
	for round := 0; round <= s.ExtraRounds && want > 0; round++ {
		paths, err := g.SamplePaths(rng, want, s.Features)
		if err != nil {
			return nil, fmt.Errorf("tes: sample paths: %w", err)
		}
		for _, p := range paths {
			xr, _, err := maximizePath(ctx, p, cands, s, rng)
			if err != nil {
				return nil, err
			}
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

// maximizePath maximizes one sample path over [0,1]^d with s.Optimize
// (s with defaults), from its best raw samples and from the s.Starts
// candidates where it is highest; it returns the maximizer and its value.
func maximizePath(ctx context.Context, p *gp.Path, cands []*mat.Dense, s trustedSettings, rng *rand.Rand) ([]float64, float64, error) {
	f := acq.PathFunc(p, pathStarts(p, cands, s.Starts))
	x, v, err := acq.MaximizeMixed(ctx, f, 1, p.Dim(), p.Categories(), s.Optimize, rng)
	if err != nil {
		return nil, 0, fmt.Errorf("tes: maximize sample path: %w", err)
	}
	return x.RawRowView(0), v, nil
}

// pathStarts returns the starts for maximizing one path: of the given
// candidates (best observed inputs and last iteration's X*), the nb where
// the path is highest. Choosing among them by one evaluation each is far
// cheaper than a local search from every one.
func pathStarts(p *gp.Path, cands []*mat.Dense, nb int) []*mat.Dense {
	idx := make([]int, len(cands))
	vals := make([]float64, len(cands))
	for i, c := range cands {
		idx[i] = i
		vals[i] = p.Eval(c.RawRowView(0))
	}
	sort.SliceStable(idx, func(a, b int) bool { return vals[idx[a]] > vals[idx[b]] })
	out := make([]*mat.Dense, 0, nb)
	for _, i := range idx[:min(nb, len(idx))] {
		out = append(out, cands[i])
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
	if m, ok := k.(*gp.Mixed); ok {
		// A categorical coordinate has no length along its axis: points in
		// different bins are distinct choices (far apart for dedup and
		// distance tests) and starts are never perturbed along it.
		for i, n := range m.Categories() {
			if n > 0 {
				out[i] = catScale
			}
		}
	}
	return out
}

// catScale is the length-scale lengthscales reports for a categorical
// coordinate: any change of bin (≥ 1/n apart at bin centres) is then
// beyond every distance threshold.
const catScale = 1e-9

// nearScaled reports whether a row of P (nil: none) lies within r
// length-scale units of x.
func nearScaled(x []float64, P *mat.Dense, ell []float64, r float64) bool {
	if P == nil {
		return false
	}
	n, _ := P.Dims()
	for i := range n {
		if scaledDist(x, P.RawRowView(i), ell) < r {
			return true
		}
	}
	return false
}

func scaledDist(x, y, ell []float64) float64 {
	s := 0.0
	for i := range x {
		d := (x[i] - y[i]) / ell[i]
		s += d * d
	}
	return math.Sqrt(s)
}
