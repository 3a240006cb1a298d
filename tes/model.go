package tes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// method selects the TES approximation of p(f_X* | y_D, x*).
type method int

const (
	// EP is TES_ep (§4.2): a Gaussian q_ep(f_X* | y_D, x*) by expectation
	// propagation, so q_ep(y_B | y_D, x*) is Gaussian (Eq. (7), App. E).
	EP method = iota
	// SP is TES_sp (§4.1): sample sets F_x*, so q_sp(y_B | y_D, x*) is a
	// mixture of Gaussians with a shared covariance.
	SP
)

// String returns the name the method is registered under with package acq:
// "tes-sp" for SP and "tes-ep" otherwise (EP, the default).
func (m method) String() string {
	if m == SP {
		return "tes-sp"
	}
	return "tes-ep"
}

// sampling selects how TES_sp builds the sets F_x* (§4.1).
type sampling int

const (
	// The zero value, importance sampling, draws SPSamples weighted
	// samples per x* (App. B): every x* keeps a set. The default.
	_ sampling = iota
	// grouping draws SPSamples·|X*| joint samples and groups them by
	// argmax; maximizers without a sample are dropped.
	grouping
)

// Settings configures TES. The zero value is TES_ep with the defaults
// documented per field.
type Settings struct {
	// Method is EP (default) or SP.
	Method method
	// Trusted is |X*|; zero means max(5, q) (the paper's prescription).
	Trusted int
	// Search configures the search for X* (zero value: its defaults).
	Search trustedSettings
	// EP configures expectation propagation (zero value: its defaults).
	EP epSettings
	// MVN configures the orthant probabilities p(x*|y_D) (zero value: its
	// defaults).
	MVN MVNSettings
	// Sampling selects TES_sp's sample sets (default: importance sampling).
	Sampling sampling
	// SPSamples is the number of samples per x* for TES_sp. Zero means 128.
	SPSamples int
	// BaseSamples is the number of Monte-Carlo base points of y_B for
	// batches evaluated by Monte Carlo (TES_ep: q ≥ 3, the total over the
	// mixture components, allocated ∝ p(x*) with at least 6 each; TES_sp:
	// q ≥ 2, shared by all samples). Zero means, for TES_ep, 512 up to
	// q = 10 and 256 beyond (the cost per evaluation is ~4·|X*|·q²·
	// BaseSamples flops; at 512 the standard error is a few percent of α:
	// 3.6–5.9% in a |B| = 3 case, where four draws of the fixed base
	// points gave 0.653–0.705 around α ≈ 0.695; see Func.Estimate), and 32
	// for TES_sp (cost |F|²·BaseSamples).
	BaseSamples int
	// GHNodes is the number of Gauss–Hermite nodes per dimension for q = 1
	// (both methods) and q = 2 (TES_ep, tensor rule, at most 10). Zero
	// means 16 for TES_ep and 8 for TES_sp (whose cost is proportional to
	// it): the integrands are smooth enough that 8 nodes already agree with
	// 80 to ~1e-4 (checked in tests).
	GHNodes int
	// MinProb drops maximizers with p(x*|y_D) below it from the mixture
	// (they cannot change α by more than ~MinProb·|log MinProb|). Zero
	// means 1e-8.
	MinProb float64
	// Log receives TES's events: a warning when X* collapses to one point,
	// a debug summary per model (|X*|, H[p(x*)], timings) and debug events
	// for batches rated −Inf. The zero value discards. The registered
	// acquisitions (Scorer, BatchSizeDiagnostic) take it from acq.State.Log
	// instead, so that the host's logger is used.
	Log zerolog.Logger
}

// withLog returns s logging to l: how the State's logger reaches a Model
// built for an acquisition.
func (s Settings) withLog(l zerolog.Logger) Settings {
	s.Log = l
	return s
}

func (s Settings) withDefaults() Settings {
	if s.SPSamples <= 0 {
		s.SPSamples = 128
	}
	if s.GHNodes <= 0 {
		s.GHNodes = 16
		if s.Method == SP {
			s.GHNodes = 8
		}
	}
	if s.MinProb <= 0 {
		s.MinProb = 1e-8
	}
	return s
}

// Model is everything TES computes once per BO iteration, independently of
// the query (Remark 2): the trusted maximizers X*, the GP conditioned on
// f_X* (Appendix C), p(x*|y_D) (Appendix A) and either the EP posteriors
// (Appendix D) or the sample sets F_x* (§4.1, Appendix B).
type Model struct {
	// XStar holds the trusted maximizers, one per row.
	XStar *mat.Dense
	// Cond is the GP additionally conditioned on f_X*.
	Cond *gp.Conditioned
	// Probs is p(x*|y_D).
	Probs *MaximizerProbs
	// EPResults holds q_ep(f_X* | y_D, x*) per x* (TES_ep; nil for x*
	// dropped by MinProb).
	EPResults []*epResult
	// Sets holds F_x* (TES_sp).
	Sets []sampleSet

	settings Settings
	noise    float64
	ep       *epMixture
	sp       *spMixture
	ell      []float64
}

// NewModel builds the query-independent state for one BO iteration: k
// trusted maximizers (trustedMaximizers, seeded with prev), g conditioned on
// them, p(x*|y_D), and the EP posteriors or sample sets. All randomness
// comes from rng.
func NewModel(ctx context.Context, g *gp.GP, rng *rand.Rand, k int, prev *mat.Dense, s Settings) (*Model, error) {
	if g == nil || rng == nil {
		return nil, fmt.Errorf("tes: nil GP or random stream")
	}
	s = s.withDefaults()
	t0 := time.Now()
	xs, err := trustedMaximizers(ctx, g, rng, k, prev, s.Search)
	if err != nil {
		return nil, err
	}
	return newModelAt(ctx, g, rng, xs, s, t0)
}

// modelAt builds the model for a given X* (rows of xs) instead of
// searching for it.
func modelAt(ctx context.Context, g *gp.GP, rng *rand.Rand, xs *mat.Dense, s Settings) (*Model, error) {
	if g == nil || rng == nil || xs == nil {
		return nil, fmt.Errorf("tes: nil GP, random stream or X*")
	}
	return newModelAt(ctx, g, rng, xs, s.withDefaults(), time.Now())
}

func newModelAt(ctx context.Context, g *gp.GP, rng *rand.Rand, xs *mat.Dense, s Settings, t0 time.Time) (*Model, error) {
	tSearch := time.Since(t0)
	cond, err := g.Condition(xs)
	if err != nil {
		return nil, fmt.Errorf("tes: condition on X*: %w", err)
	}
	mean, cov := cond.Prior()
	probs, err := MaximizerProbabilities(rng, mean, cov, s.MVN)
	if err != nil {
		return nil, err
	}
	m := &Model{XStar: xs, Cond: cond, Probs: probs, settings: s,
		noise: g.NoiseVar() + g.Jitter(), ell: lengthscales(g.Kernel())}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch s.Method {
	case EP:
		err = m.buildEP(mean, cov)
	case SP:
		err = m.buildSP(rng, mean, cov)
	default:
		err = fmt.Errorf("tes: unknown method %d", s.Method)
	}
	if err != nil {
		return nil, err
	}
	k, _ := xs.Dims()
	if k == 1 {
		// Not a fault: a model sure of x* (a plane's corner, a converged
		// study) repeats this every iteration, and Deliver handles it
		// (sure.go).
		s.Log.Debug().Msg("tes: only one distinct trusted maximizer, so α ≡ 0 this iteration (the posterior is sure of x*); tes-ep/tes-sp evaluate at x* (and small perturbations of it), tes at the largest posterior variance")
	}
	s.Log.Debug().Str("acq", s.Method.String()).Int("trusted", k).
		Float64("H_xstar", probs.Entropy()).Float64("p_rawsum", probs.RawSum).
		Dur("search", tSearch).Dur("total", time.Since(t0)).Msg("tes: prepared")
	return m, nil
}

// buildEP runs EP for every x* with p ≥ MinProb, in parallel.
func (m *Model) buildEP(mean []float64, cov *mat.SymDense) error {
	k := len(mean)
	m.EPResults = make([]*epResult, k)
	errs := make([]error, k)
	parallel(k, func(j int) {
		if m.Probs.P[j] < m.settings.MinProb {
			return
		}
		m.EPResults[j], errs[j] = maximizerEP(mean, cov, j, m.settings.EP)
	})
	e := &epMixture{K: k}
	tot := 0.0
	for j, r := range m.EPResults {
		if errs[j] != nil {
			return fmt.Errorf("tes: EP for x*_%d: %w", j, errs[j])
		}
		if r == nil {
			continue
		}
		logEP(m.settings.Log, j, r)
		sig, _ := symData(r.Cov)
		e.P = append(e.P, m.Probs.P[j])
		e.Mu = append(e.Mu, r.Mean)
		e.Sig = append(e.Sig, sig)
		tot += m.Probs.P[j]
	}
	for i := range e.P {
		e.P[i] /= tot
	}
	m.ep = e
	return nil
}

// logEP reports EP runs that need attention. Skipped site updates arise
// only from rounding (a non-positive cavity variance) or a step that would
// make Σ_ep indefinite; the site then keeps its previous value, so q_ep may
// sit off EP's fixed point even when the sweeps met the tolerance: warn.
// Degenerate sites (near-duplicate maximizers, whose difference has no
// prior variance) are expected and stay flat by design: debug.
func logEP(log zerolog.Logger, j int, r *epResult) {
	if !r.Converged {
		log.Warn().Int("xstar", j).Int("sweeps", r.Sweeps).Int("skipped", r.Skipped).
			Msg("tes: EP did not converge; using its last iterate")
	} else if r.Skipped > 0 {
		log.Warn().Int("xstar", j).Int("skipped", r.Skipped).Int("sweeps", r.Sweeps).Float64("damping", r.Damping).
			Msg("tes: EP skipped site updates (non-positive cavity variance or indefinite step); those sites kept their previous values")
	}
	if r.Degenerate > 0 {
		log.Debug().Int("xstar", j).Int("degenerate", r.Degenerate).
			Msg("tes: EP left sites flat for near-duplicate maximizers")
	}
}

// buildSP draws the sample sets F_x*.
func (m *Model) buildSP(rng *rand.Rand, mean []float64, cov *mat.SymDense) error {
	var err error
	switch m.settings.Sampling {
	case grouping:
		m.Sets, err = groupedSampleSets(rng, mean, cov, m.settings.SPSamples*len(mean))
	default:
		m.Sets, err = importanceSampleSets(rng, mean, cov, m.settings.SPSamples)
	}
	if err != nil {
		return err
	}
	var kept []sampleSet
	for _, st := range m.Sets {
		if m.Probs.P[st.Star] >= m.settings.MinProb {
			kept = append(kept, st)
		}
	}
	m.sp, err = newSPMixture(kept, m.Probs.P)
	return err
}

// Entropy returns H(x*) (nats) of the mixture weights actually used, the
// upper bound of α.
func (m *Model) Entropy() float64 {
	if m.ep != nil {
		return entropy(m.ep.P)
	}
	return entropy(m.sp.PSet)
}

// parallel runs body(0..n-1) on GOMAXPROCS goroutines.
func parallel(n int, body func(i int)) {
	w := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int)
	for i := 0; i < w; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				body(j)
			}
		}()
	}
	for j := 0; j < n; j++ {
		next <- j
	}
	close(next)
	wg.Wait()
}

// errNotFinite is reported when an evaluation yields NaN/Inf.
var errNotFinite = fmt.Errorf("tes: acquisition value is not finite")

// clamp01 clips to [0, 1].
func clamp01(v float64) float64 { return math.Min(1, math.Max(0, v)) }
