package acq

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// PosteriorMean is the GP posterior mean μ(x) as a Func of one point
// (q = 1) with its gradient ∇μ(x). Maximizing it gives the recommendation
// x̄ = argmax μ of the TES paper's §5. Start rows (unit cube, may be nil)
// are suggested to the optimizer as extra starting points (Starter): the
// best evaluated point, so that x̄ is never worse than it for want of a
// start in its basin.
type PosteriorMean struct {
	GP    *gp.GP
	Start *mat.Dense // k×d starting points, or nil
}

// Eval implements Func.
func (f PosteriorMean) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	if grad == nil {
		m, _ := f.GP.MeanVar(x)
		return m
	}
	m, _ := f.GP.MeanVarGrad(x, grad.RawRowView(0), nil)
	return m
}

// HasGradient implements Differentiable.
func (PosteriorMean) HasGradient() bool { return true }

// Starts implements Starter: the rows of Start, one start each (none when
// q ≠ 1).
func (f PosteriorMean) Starts(q int) []*mat.Dense {
	if q != 1 || f.Start == nil {
		return nil
	}
	r, d := f.Start.Dims()
	out := make([]*mat.Dense, r)
	for i := range r {
		out[i] = mat.NewDense(1, d, f.Start.RawRowView(i))
	}
	return out
}

// BestMean returns the index of the observed input (row of g.X()) with the
// largest posterior mean and the means at every observed input.
func BestMean(g *gp.GP) (best int, means []float64) {
	return BestMeanAt(g, g.X())
}

// BestMeanOnSlice returns the observed input with the largest posterior
// mean once moved onto the pinned slice — its pinned coordinates (pinned[j]
// not NaN, State.Pinned) set to the pins — as that moved point (1×d), and
// the mean there. Without pins it is BestMean's observed input. With pins
// it is the best place on the slice the data point to: inputs observed
// before the pins, or imported, lie off the slice, and the mean at them
// says nothing about it.
func BestMeanOnSlice(g *gp.GP, pinned []float64) (*mat.Dense, float64) {
	P := mat.DenseCopyOf(g.X())
	applyPins(P.RawMatrix().Data, pinned) // DenseCopyOf's rows are contiguous
	best, means := BestMeanAt(g, P)
	return mat.NewDense(1, g.Dim(), P.RawRowView(best)), means[best]
}

// BestMeanAt returns the row of X with the largest posterior mean (the
// first among equals) and the means at every row.
func BestMeanAt(g *gp.GP, X *mat.Dense) (best int, means []float64) {
	n, _ := X.Dims()
	means = make([]float64, n)
	g.Predict(X, means, nil)
	for i, m := range means {
		if m > means[best] {
			best = i
		}
	}
	return best, means
}

// MaximizeVariance returns the point of [0,1]^d (1×d) where g's
// posterior variance is largest, maximizing log σ(x) (every choice of a
// mixed space open) with set's restrictions and settings, drawing from
// rng: the point the model knows least.
func MaximizeVariance(ctx context.Context, g *gp.GP, set OptimizeSettings, rng *rand.Rand) (*mat.Dense, error) {
	x, _, err := MaximizeMixed(ctx, logSD(g), 1, g.Dim(), CategoriesOf(g), set, rng)
	return x, err
}

// logSD is log σ(x), the posterior's standard deviation, for one point.
func logSD(g *gp.GP) *pointFunc {
	return &pointFunc{g: g, log: true, score: func(_, sd float64) (float64, float64, float64) {
		return math.Log(sd), 0, 1 / sd
	}}
}

// MaximizeMean returns x̄ = argmax μ over [0,1]^d (1×d) and μ(x̄), searched
// by Maximize with its default settings from the best raw samples and from
// every row of starts (may be nil), drawing from rng.
//
// On a mixed space (g has a gp.Mixed kernel) the search is restricted to
// the combinations of choices of the starts (of g's observations when
// starts is nil): the choices stay those of the points the caller trusts
// (the best evaluated point, previous trusted maximizers) and only the
// continuous coordinates are refined. μ in another combination is the
// overlap kernel's extrapolation across choices; on the mixed suite the
// unrestricted argmax μ often lay in a combination whose true value was
// far worse than the best evaluated point's (docs/results/README.md,
// "Measurements behind the code").
//
// set restricts the search (its Pinned and Canonical, see State.Pin; its
// other fields are ignored): over the slice of the cube where the pinned
// coordinates take their values, at canonical points of a conditional
// space. The search over choices is then not restricted to the starts'
// combinations: a pinned choice may be one no start has.
func MaximizeMean(ctx context.Context, g *gp.GP, starts *mat.Dense, set OptimizeSettings, rng *rand.Rand) (*mat.Dense, float64, error) {
	if set.Pinned != nil || set.Canonical != nil {
		restrict := OptimizeSettings{Pinned: set.Pinned, Canonical: set.Canonical}
		return MaximizeMixed(ctx, PosteriorMean{GP: g, Start: starts}, 1, g.Dim(), CategoriesOf(g), restrict, rng)
	}
	var f Func = PosteriorMean{GP: g, Start: starts}
	cats := CategoriesOf(g)
	if cats != nil {
		from := g.X()
		if starts != nil {
			from = starts
		}
		f = seenCombos{PosteriorMean: f.(PosteriorMean), seen: combosOf(from, cats), cats: cats}
	}
	return MaximizeMixed(ctx, f, 1, g.Dim(), cats, OptimizeSettings{}, rng)
}

// seenCombos is PosteriorMean restricted to a set of combinations of
// choices: −∞ (and a zero gradient) at a point whose combination is not in
// seen. The raw samples in other combinations score −∞, and the
// categorical step of MaximizeMixed moves a start only between allowed
// combinations.
type seenCombos struct {
	PosteriorMean
	seen map[string]bool
	cats []int
}

// Eval implements Func.
func (f seenCombos) Eval(X, grad *mat.Dense) float64 {
	if !f.seen[comboKey(X.RawRowView(0), f.cats)] {
		if grad != nil {
			grad.Zero()
		}
		return math.Inf(-1)
	}
	return f.PosteriorMean.Eval(X, grad)
}

// combosOf returns the set of combinations of choices among the rows of X.
func combosOf(X *mat.Dense, cats []int) map[string]bool {
	n, _ := X.Dims()
	seen := make(map[string]bool, n)
	for i := range n {
		seen[comboKey(X.RawRowView(i), cats)] = true
	}
	return seen
}

// comboKey encodes the choices (gp.Bin) of x's categorical coordinates.
func comboKey(x []float64, cats []int) string {
	var buf [64]byte
	b := buf[:0]
	for j, n := range cats {
		if n > 0 {
			b = binary.LittleEndian.AppendUint32(b, uint32(gp.Bin(x[j], n)))
		}
	}
	return string(b)
}
