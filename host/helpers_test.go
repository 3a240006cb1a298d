package host

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// branin is the negated Branin function on its usual domain
// [−5,10]×[0,15], maximized; f* = −0.397887. It adds deterministic
// observation noise of variance noise_var seeded by (seed, x) as the
// benchmark plugins do (it implements sdk.Configurable, receiving noise_var
// and seed as the CLI's --noise-var and --seed), and sdk.NoiseFree.
type branin struct {
	mu       sync.Mutex
	noiseVar float64
	seed     uint64
	params   map[string]string
	calls    atomic.Int64
}

var braninOpt = -0.397887357729739

func (b *branin) Info(context.Context) (sdk.Info, error) {
	opt := braninOpt
	return sdk.Info{Name: "test/branin", Params: []sdk.Param{
		{Name: "x1", Kind: sdk.Float, Low: -5, High: 10},
		{Name: "x2", Kind: sdk.Float, Low: 0, High: 15},
	}, Optimum: &opt}, nil
}

func (b *branin) Configure(_ context.Context, p map[string]string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.params = p
	v, err := strconv.ParseFloat(p["noise_var"], 64)
	if err != nil {
		return err
	}
	s, err := strconv.ParseUint(p["seed"], 10, 64)
	if err != nil {
		return err
	}
	b.noiseVar, b.seed = v, s
	return nil
}

func braninF(x []float64) float64 {
	a, bb, c, r, s, t := 1.0, 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 6.0, 10.0, 1/(8*math.Pi)
	v := x[1] - bb*x[0]*x[0] + c*x[0] - r
	return -(a*v*v + s*(1-t)*math.Cos(x[0]) + s)
}

func (b *branin) EvaluateNoiseFree(_ context.Context, x []float64) (float64, error) {
	return braninF(x), nil
}

func (b *branin) Evaluate(_ context.Context, x []float64) (float64, error) {
	b.calls.Add(1)
	b.mu.Lock()
	nv, seed := b.noiseVar, b.seed
	b.mu.Unlock()
	h := fnv.New64a()
	binary.Write(h, binary.LittleEndian, seed)
	for _, v := range x {
		binary.Write(h, binary.LittleEndian, math.Float64bits(v))
	}
	z := rand.New(rand.NewPCG(h.Sum64(), 7)).NormFloat64()
	return braninF(x) + math.Sqrt(nv)*z, nil
}

// ucb is a small test acquisition: α(x) = μ(x) + 2σ(x) per point, summed
// over the batch, maximized by acq.Maximize (few raw samples to keep tests
// fast). It depends on the GP and on State.Rand, so it exercises the
// determinism machinery.
type ucb struct{}

type ucbFunc struct{ s *acq.State }

func (ucb) Prepare(_ context.Context, s *acq.State, q int) (acq.Func, error) { return ucbFunc{s}, nil }

func (f ucbFunc) Eval(X, grad *mat.Dense) float64 {
	r, d := X.Dims()
	total := 0.0
	dm, dv := make([]float64, d), make([]float64, d)
	for i := range r {
		m, v := f.s.GP.MeanVarGrad(X.RawRowView(i), dm, dv)
		sd := math.Sqrt(v + 1e-12)
		total += m + 2*sd
		if grad != nil {
			for j := range d {
				grad.Set(i, j, dm[j]+dv[j]/sd)
			}
		}
	}
	return total
}

func (ucbFunc) HasGradient() bool { return true }

func testProposer() acq.Proposer {
	return acq.Optimized{Scorer: ucb{}, Settings: acq.OptimizeSettings{RawSamples: 64, Restarts: 2, MaxIter: 50, Workers: 2}}
}

// randomProposer proposes uniform points from State.Rand.
type randomProposer struct{}

func (randomProposer) Propose(_ context.Context, s *acq.State, q int) (*mat.Dense, error) {
	d := s.GP.Dim()
	X := mat.NewDense(q, d, nil)
	for i := range q {
		for j := range d {
			X.Set(i, j, s.Rand.Float64())
		}
	}
	return X, nil
}

// constProposer always proposes the same point (to test nudging).
type constProposer struct{ u float64 }

func (c constProposer) Propose(_ context.Context, s *acq.State, q int) (*mat.Dense, error) {
	X := mat.NewDense(q, s.GP.Dim(), nil)
	for i := range q {
		for j := range s.GP.Dim() {
			X.Set(i, j, c.u)
		}
	}
	return X, nil
}

// failingProposer always errors.
type failingProposer struct{}

func (failingProposer) Propose(context.Context, *acq.State, int) (*mat.Dense, error) {
	return nil, errors.New("boom")
}

// funcObjective adapts a function to sdk.Objective.
type funcObjective struct {
	info sdk.Info
	f    func(ctx context.Context, x []float64) (float64, error)
}

func (o funcObjective) Info(context.Context) (sdk.Info, error) { return o.info, nil }
func (o funcObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	return o.f(ctx, x)
}

func unitInfo(d int) sdk.Info {
	ps := make([]sdk.Param, d)
	for i := range ps {
		ps[i] = sdk.Param{Name: "x" + strconv.Itoa(i), Kind: sdk.Float, Low: 0, High: 1}
	}
	return sdk.Info{Name: "test/unit", Params: ps}
}

// wrap gives the host's handle on a database a test opened with package
// store (to inspect it directly too).
func wrap(db store.Storage) *Storage { return &Storage{s: db} }

// testHooks returns the study's test hooks, made on first use.
func (s *Study) testHooks() *testHooks {
	if s.hooks == nil {
		s.hooks = &testHooks{}
	}
	return s.hooks
}

// askTell asks s for its next points and tells it obj's values there.
func askTell(t *testing.T, s *Study, obj sdk.Objective) {
	t.Helper()
	ctx := context.Background()
	trs, err := s.Ask(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		v, _ := obj.Evaluate(ctx, tr.X)
		if err := s.Tell(ctx, tr.ID, v, nil); err != nil {
			t.Fatal(err)
		}
	}
}
