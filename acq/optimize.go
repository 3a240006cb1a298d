package acq

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/samplemv"
)

// method selects the local optimizer of Maximize.
type method int

const (
	// methodLBFGS is a bound-constrained limited-memory quasi-Newton
	// method: projected L-BFGS with an active set, L-BFGS-B without its
	// generalized Cauchy point (see projectedLBFGS). It is the zero value
	// and the default, and it sees the deterministic Func.Eval.
	methodLBFGS method = iota
	// methodAdam is projected stochastic gradient ascent with Adam steps (Kingma &
	// Ba 2015). A Func implementing Stochastic is evaluated with fresh
	// Monte-Carlo samples at each step (the TES paper's setting: 300 steps);
	// other Funcs are followed along their deterministic gradient.
	methodAdam
)

// OptimizeSettings configures Maximize. Every zero field takes the documented
// default, so OptimizeSettings{} is a sensible configuration (the BoTorch
// defaults the project is compared with: 512 raw samples, 10 restarts).
type OptimizeSettings struct {
	// Method is the local optimizer (default methodLBFGS).
	Method method `json:"method"`
	// RawSamples is the number of space-filling candidate batches (scrambled
	// Halton points in [0,1]^{q·d}) scored before the local searches.
	// 0 means 512.
	RawSamples int `json:"raw_samples"`
	// Restarts is the number of best raw samples the local search starts
	// from; starts suggested by a Starter are run in addition. 0 means 10.
	Restarts int `json:"restarts"`
	// MaxIter bounds the iterations of each projected L-BFGS search. 0 means 200.
	MaxIter int `json:"max_iter"`
	// GradTol stops a search when the projected gradient's largest
	// component, |P(x + ∇α) − x|_∞, falls below it. 0 means 1e-5.
	GradTol float64 `json:"grad_tol"`
	// FuncTol stops a search when an iteration improves α by less than
	// FuncTol·max(|α|, 1). 0 means 1e-9.
	FuncTol float64 `json:"func_tol"`
	// Memory is the number of correction pairs L-BFGS keeps. 0 means 10.
	Memory int `json:"memory"`
	// FDStep is the forward finite-difference step for Funcs without an
	// analytic gradient (in unit-cube coordinates). 0 means 1e-6.
	FDStep float64 `json:"fd_step"`
	// AdamIters is the number of Adam steps per start. 0 means 300.
	AdamIters int `json:"adam_iters"`
	// AdamStep is Adam's learning rate (unit-cube coordinates per step).
	// 0 means 0.01.
	AdamStep float64 `json:"adam_step"`
	// Workers is the number of goroutines that score raw samples and run
	// restarts. 0 means runtime.GOMAXPROCS(0). The result does not depend
	// on it.
	Workers int `json:"workers"`
	// Pinned, when non-nil, holds per coordinate (length d) the value
	// every point of the batch must take, NaN for a free coordinate: the
	// search runs over the free coordinates only (see pin.go). It is set
	// per iteration from State.Pinned (State.Pin), never stored.
	Pinned []float64 `json:"-"`
	// Canonical, when non-nil, makes a point (length d) of a conditional
	// space canonical in place — its inactive coordinates at their
	// defaults — and returns which coordinates are inactive (nil: none).
	// The search then scores canonical points only (conditional.go). Set
	// per iteration from State.Canonical, never stored.
	Canonical func(x []float64) []bool `json:"-"`
}

func (s OptimizeSettings) withDefaults() OptimizeSettings {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	deff := func(v *float64, d float64) {
		if !(*v > 0) {
			*v = d
		}
	}
	def(&s.RawSamples, 512)
	def(&s.Restarts, 10)
	def(&s.MaxIter, 200)
	def(&s.Memory, 10)
	def(&s.AdamIters, 300)
	def(&s.Workers, runtime.GOMAXPROCS(0))
	deff(&s.GradTol, 1e-5)
	deff(&s.FuncTol, 1e-9)
	deff(&s.FDStep, 1e-6)
	deff(&s.AdamStep, 0.01)
	return s
}

// Maximize maximizes f over batches of q points in [0,1]^d, jointly over all
// q·d coordinates. It scores RawSamples space-filling candidate batches,
// runs a local search (L-BFGS-B or Adam, see Method) from the best Restarts of
// them and from every start f suggests (Starter), in parallel, and returns the
// best batch found (q×d, every entry in [0,1]) with its value f.Eval.
//
// The result is a deterministic function of f, q, d, s and the state of rng
// (rng is used only by the calling goroutine), whatever the number of workers
// and the scheduling.
func Maximize(ctx context.Context, f Func, q, d int, s OptimizeSettings, rng *rand.Rand) (*mat.Dense, float64, error) {
	return MaximizeMixed(ctx, f, q, d, nil, s, rng)
}

// MaximizeMixed is Maximize over a space with categorical coordinates:
// cats[j] = n > 0 makes coordinate j of every batch point a choice among n
// bins of [0,1] (gp.Bin), 0 leaves it continuous (CategoriesOf reads cats
// from a GP's kernel). Categorical coordinates sit at bin centres in the raw
// samples, the starts and the result; each restart first sets its choices
// by a search over them (exact enumeration of the combinations when there
// are at most maxEnumerate) and then runs the local search over the
// continuous coordinates, and the best mixedPolish restarts go on
// alternating the two (see mixedSearch). With nil or all-zero cats it is
// Maximize.
func MaximizeMixed(ctx context.Context, f Func, q, d int, cats []int, s OptimizeSettings, rng *rand.Rand) (*mat.Dense, float64, error) {
	if q < 1 || d < 1 {
		return nil, math.NaN(), fmt.Errorf("maximize: batch size %d and dimension %d must be positive", q, d)
	}
	if f == nil || rng == nil {
		return nil, math.NaN(), fmt.Errorf("maximize: nil function or random stream")
	}
	s = s.withDefaults()
	if err := checkPins(s.Pinned, d); err != nil {
		return nil, math.NaN(), err
	}
	cats = freeCategories(cats, s.Pinned)
	f = canonicalize(f, s.Canonical)
	raw, rawVal, err := scoreRawSamples(ctx, f, q, d, cats, s, rng)
	if err != nil {
		return nil, math.NaN(), err
	}
	mx := newMixedSearch(cats, q, d)
	mask := pinMask(mx.fixed, s.Pinned, q)
	order := make([]int, s.RawSamples)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rawVal[order[a]] > rawVal[order[b]] })
	starts, err := mixedStarts(f, raw, order, q, d, s, mx)
	if err != nil {
		return nil, math.NaN(), err
	}

	// Each restart gets its own seed, drawn here, so results do not depend
	// on scheduling.
	seeds := make([][2]uint64, len(starts))
	for i := range seeds {
		seeds[i] = [2]uint64{rng.Uint64(), rng.Uint64()}
	}
	res := make([]float64, len(starts))
	localFor := func(i int) (*problem, func([]float64) float64) {
		p := newProblem(f, q, d, s.FDStep)
		p.fixed = mask
		return p, func(x []float64) float64 {
			switch s.Method {
			case methodAdam:
				r := rand.New(rand.NewPCG(seeds[i][0], seeds[i][1]))
				adam(ctx, p, x, s, r)
				return evalValue(f, x, q, d)
			default:
				return -projectedLBFGS(ctx, p, x, s)
			}
		}
	}
	err = parallelFor(ctx, len(starts), s.Workers, func(i int) {
		p, local := localFor(i)
		res[i] = mx.start(p, starts[i], local)
	})
	if err == nil && mx.cats != nil {
		top := mx.best(res)
		err = parallelFor(ctx, len(top), s.Workers, func(t int) {
			i := top[t]
			p, local := localFor(i)
			res[i] = mx.polish(ctx, p, starts[i], res[i], local)
		})
	}
	if err != nil {
		return nil, math.NaN(), fmt.Errorf("maximize: %w", err)
	}

	best, bestVal := []float64(nil), math.Inf(-1)
	for i, v := range res {
		if v > bestVal {
			best, bestVal = starts[i], v
		}
	}
	if best == nil || rawVal[order[0]] > bestVal {
		// Every local search failed to beat the best raw sample (or all
		// values are -Inf): fall back on it.
		best, bestVal = raw.RawRowView(order[0]), rawVal[order[0]]
	}
	out := mat.NewDense(q, d, append([]float64(nil), best...))
	clipUnit(out.RawMatrix().Data)
	mx.snap(out.RawMatrix().Data)
	applyPins(out.RawMatrix().Data, s.Pinned)
	if s.Canonical != nil {
		for i := range q {
			s.Canonical(out.RawRowView(i))
		}
	}
	return out, bestVal, nil
}

// scoreRawSamples draws MaximizeMixed's raw samples, categorical
// coordinates at bin centres, and their values (−Inf for NaN).
func scoreRawSamples(ctx context.Context, f Func, q, d int, cats []int, s OptimizeSettings, rng *rand.Rand) (*mat.Dense, []float64, error) {
	n := q * d
	// Raw samples: scrambled Halton points (Latin hypercube beyond the
	// Halton implementation's 1000 dimensions).
	raw := mat.NewDense(s.RawSamples, n, nil)
	src := rand.NewPCG(rng.Uint64(), rng.Uint64())
	if n <= 1000 {
		samplemv.Halton{Kind: samplemv.Owen, Q: distmv.NewUnitUniform(n, src), Src: src}.Sample(raw)
	} else {
		samplemv.LatinHypercube{Q: distmv.NewUnitUniform(n, src), Src: src}.Sample(raw)
	}
	if len(cats) != 0 && len(cats) != d {
		return nil, nil, fmt.Errorf("maximize: %d categories for dimension %d", len(cats), d)
	}
	snapRaw(raw, cats, q, d)
	if s.Pinned != nil {
		for i := 0; i < s.RawSamples; i++ {
			applyPins(raw.RawRowView(i), s.Pinned)
		}
	}
	rawVal := make([]float64, s.RawSamples)
	var err error
	if bs, ok := f.(batchScorer); ok && q == 1 {
		// Score the raw samples in chunks with the batched posterior.
		const chunk = 128
		nc := (s.RawSamples + chunk - 1) / chunk
		err = parallelFor(ctx, nc, s.Workers, func(c int) {
			lo, hi := c*chunk, min((c+1)*chunk, s.RawSamples)
			bs.evalRows(raw.Slice(lo, hi, 0, n).(*mat.Dense), rawVal[lo:hi])
			for i := lo; i < hi; i++ {
				if math.IsNaN(rawVal[i]) {
					rawVal[i] = math.Inf(-1)
				}
			}
		})
	} else {
		err = parallelFor(ctx, s.RawSamples, s.Workers, func(i int) {
			rawVal[i] = evalValue(f, raw.RawRowView(i), q, d)
		})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("maximize: %w", err)
	}
	return raw, rawVal, nil
}

// mixedStarts are MaximizeMixed's restarts: the best Restarts raw samples
// (order sorts them best first) and the function's suggested starts (a
// Starter's), snapped to the categorical bins.
func mixedStarts(f Func, raw *mat.Dense, order []int, q, d int, s OptimizeSettings, mx *mixedSearch) ([][]float64, error) {
	n := q * d
	var starts [][]float64
	for _, i := range order[:min(s.Restarts, len(order))] {
		starts = append(starts, append([]float64(nil), raw.RawRowView(i)...))
	}
	if st, ok := f.(Starter); ok {
		for _, B := range st.Starts(q) {
			if B == nil {
				continue
			}
			if r, c := B.Dims(); r != q || c != d {
				return nil, fmt.Errorf("maximize: suggested start is %d×%d, want %d×%d", r, c, q, d)
			}
			x := make([]float64, 0, n)
			for i := 0; i < q; i++ {
				x = append(x, B.RawRowView(i)...)
			}
			clipUnit(x)
			mx.snap(x)
			applyPins(x, s.Pinned)
			starts = append(starts, x)
		}
	}
	return starts, nil
}

// batchScorer is implemented by single-point (q = 1) Funcs that score many
// points at once faster than one Eval each (the raw-sample phase):
// out[i] = Eval of row i of X.
type batchScorer interface {
	evalRows(X *mat.Dense, out []float64)
}

// evalValue returns f at the flat batch x (q·d), mapping NaN to -Inf.
func evalValue(f Func, x []float64, q, d int) float64 {
	v := f.Eval(mat.NewDense(q, d, x), nil)
	if math.IsNaN(v) {
		return math.Inf(-1)
	}
	return v
}

// clipUnit projects x onto [0,1]^n in place.
func clipUnit(x []float64) {
	for i, v := range x {
		switch {
		case v < 0 || math.IsNaN(v):
			x[i] = 0
		case v > 1:
			x[i] = 1
		}
	}
}

// parallelFor runs body(i) for i in [0,n) on up to workers goroutines and
// returns ctx.Err() if the context was cancelled meanwhile.
func parallelFor(ctx context.Context, n, workers int, body func(i int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	workers = max(1, min(workers, n))
	if workers == 1 {
		for i := 0; i < n; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			body(i)
		}
		return nil
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				body(i)
			}
		}()
	}
	var err error
	for i := 0; i < n; i++ {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return err
}

// problem is the minimization view −α of a Func used by the local searches;
// it owns scratch memory, so each restart creates its own.
type problem struct {
	f       Func
	q, d    int
	hasGrad bool
	fdStep  float64
	tmp     []float64
	evals   int
	fixed   []bool // coordinates the local search must not move (categorical), or nil
}

// maskGrad zeroes the gradient of the fixed coordinates: with a zero
// gradient component L-BFGS (whose memory then has zeros there too) and
// Adam leave the coordinate where it is.
func (p *problem) maskGrad(g []float64) {
	for i, f := range p.fixed {
		if f {
			g[i] = 0
		}
	}
}

func newProblem(f Func, q, d int, fdStep float64) *problem {
	p := &problem{f: f, q: q, d: d, fdStep: fdStep, tmp: make([]float64, q*d)}
	if df, ok := f.(Differentiable); ok && df.HasGradient() {
		p.hasGrad = true
	}
	return p
}

// value returns −α(x).
func (p *problem) value(x []float64) float64 {
	p.evals++
	v := p.f.Eval(mat.NewDense(p.q, p.d, x), nil)
	if math.IsNaN(v) {
		return math.Inf(1)
	}
	return -v
}

// valueGrad returns −α(x) and writes −∇α(x) into g, analytically when the
// Func can, else by forward differences (backward at the upper bound).
func (p *problem) valueGrad(x, g []float64) float64 {
	if p.hasGrad {
		p.evals++
		G := mat.NewDense(p.q, p.d, g)
		for i := range g {
			g[i] = 0
		}
		v := p.f.Eval(mat.NewDense(p.q, p.d, x), G)
		if math.IsNaN(v) {
			return math.Inf(1)
		}
		for i := range g {
			g[i] = -g[i]
		}
		p.maskGrad(g)
		return -v
	}
	f0 := p.value(x)
	if math.IsInf(f0, 0) {
		for i := range g {
			g[i] = 0
		}
		return f0
	}
	copy(p.tmp, x)
	for i := range x {
		if p.fixed != nil && p.fixed[i] {
			g[i] = 0
			continue
		}
		h := p.fdStep
		if x[i]+h > 1 {
			h = -h
		}
		p.tmp[i] = x[i] + h
		fi := p.value(p.tmp)
		p.tmp[i] = x[i]
		if math.IsInf(fi, 0) {
			g[i] = 0
			continue
		}
		g[i] = (fi - f0) / h
	}
	return f0
}
