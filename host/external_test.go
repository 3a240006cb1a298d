package host

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
)

func TestPosteriorView(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	X := mat.NewDense(6, 2, nil)
	y := make([]float64, 6)
	for i := range 6 {
		X.Set(i, 0, rng.Float64())
		X.Set(i, 1, rng.Float64())
		y[i] = rng.NormFloat64()
	}
	g, err := gp.New(gp.NewSE([]float64{0.3, 0.4}, 1.2), 0.01, X, y)
	if err != nil {
		t.Fatal(err)
	}
	p := NewPosterior(g, 1.5)
	if p.Dim() != 2 || p.NoiseVar() != 0.01 || p.Incumbent() != 1.5 {
		t.Fatalf("summary: %d %v %v", p.Dim(), p.NoiseVar(), p.Incumbent())
	}
	obs := p.Observations()
	if len(obs) != 6 || obs[3].Value != y[3] || obs[3].X[1] != X.At(3, 1) {
		t.Fatalf("observations %+v", obs)
	}
	pts := [][]float64{{0.1, 0.2}, {0.5, 0.5}, {0.9, 0.1}}
	mean, cov := p.MeanCov(pts)
	for i, x := range pts {
		m, v := g.MeanVar(x)
		if math.Abs(mean[i]-m) > 1e-12 || math.Abs(cov[i][i]-v) > 1e-12 {
			t.Fatalf("point %d: %v %v vs %v %v", i, mean[i], cov[i][i], m, v)
		}
		for j := range pts {
			if cov[i][j] != cov[j][i] {
				t.Fatal("covariance not symmetric")
			}
		}
	}
}

// The view says which coordinates are categorical: the mixed kernel's
// choice counts, and nil on a continuous space.
func TestPosteriorViewCategories(t *testing.T) {
	X := mat.NewDense(3, 2, []float64{0.1, 0.2, 0.5, 0.9, 0.8, 0.5})
	y := []float64{1, -1, 0.5}
	g, err := gp.New(gp.NewMixed([]int{0, 4}, false, []float64{0.3, 1}, 1), 0.01, X, y)
	if err != nil {
		t.Fatal(err)
	}
	if c := sdk.Categories(NewPosterior(g, 1)); len(c) != 2 || c[0] != 0 || c[1] != 4 {
		t.Fatalf("mixed: Categories = %v, want [0 4]", c)
	}
	g, err = gp.New(gp.NewSE([]float64{0.3, 1}, 1), 0.01, X, y)
	if err != nil {
		t.Fatal(err)
	}
	if c := sdk.Categories(NewPosterior(g, 1)); c != nil {
		t.Fatalf("continuous: Categories = %v, want nil", c)
	}
}

// scoreAcq scores a batch by −Σ‖x − c‖² (maximized at c), checking that it
// is handed a usable posterior.
type scoreAcq struct {
	c    []float64
	fail bool
}

func (s scoreAcq) Score(_ context.Context, p sdk.Posterior, batch [][]float64) (float64, error) {
	if s.fail {
		return 0, errors.New("script crashed")
	}
	if p.Dim() != len(s.c) || len(p.Observations()) == 0 {
		return 0, errors.New("bad posterior")
	}
	v := 0.0
	for _, x := range batch {
		for j := range x {
			v -= (x[j] - s.c[j]) * (x[j] - s.c[j])
		}
	}
	return v, nil
}

func TestAcquisitionProposer(t *testing.T) {
	set := acq.OptimizeSettings{RawSamples: 32, Restarts: 2, Workers: 1}
	res, err := Optimize(context.Background(), &branin{}, Options{
		Acquisition: "script", Proposer: AcquisitionProposer(scoreAcq{c: []float64{0.25, 0.75}}, set),
		Batch: 1, Iters: 2, Init: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The first BO point maximizes the score: (0.25, 0.75) in the cube.
	u := res.Trials[2].U
	if math.Abs(u[0]-0.25) > 1e-3 || math.Abs(u[1]-0.75) > 1e-3 {
		t.Fatalf("proposed %v, want ≈ [0.25 0.75]", u)
	}
	// A script that always fails: the study falls back and goes on.
	o := Options{Proposer: AcquisitionProposer(scoreAcq{c: []float64{0, 0}, fail: true}, set), Batch: 1, Iters: 2, Init: 2}
	s, err := NewStudy(context.Background(), unitInfo(2), o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(context.Background(), funcObjective{info: unitInfo(2), f: func(_ context.Context, x []float64) (float64, error) { return x[0], nil }}); err != nil {
		t.Fatal(err)
	}
	if s.iters[1].fallback == "" || s.iters[2].fallback == "" {
		t.Fatalf("failing script did not fall back: %+v %+v", s.iters[1], s.iters[2])
	}
}

// gridSuggester proposes the Count smallest unused integer points of its
// request's space, checking what the host sends.
type gridSuggester struct{ t *testing.T }

func (g gridSuggester) Suggest(_ context.Context, req sdk.SuggestRequest) ([][]float64, error) {
	used := map[[2]float64]bool{}
	for _, o := range req.History {
		used[[2]float64{o.X[0], o.X[1]}] = true
	}
	for _, x := range req.Pending {
		used[[2]float64{x[0], x[1]}] = true
	}
	var out [][]float64
	for a := req.Objective.Params[0].Low; a <= req.Objective.Params[0].High && len(out) < req.Count; a++ {
		for b := req.Objective.Params[1].Low; b <= req.Objective.Params[1].High && len(out) < req.Count; b++ {
			if !used[[2]float64{a, b}] {
				out = append(out, []float64{a, b})
			}
		}
	}
	return out, nil
}

// A suggester proposes every batch itself, from the history (Options.Suggester).
func TestSuggester(t *testing.T) {
	info := sdk.Info{Name: "grid", Params: []sdk.Param{{Name: "a", Kind: sdk.Int, Low: 0, High: 2}, {Name: "b", Kind: sdk.Int, Low: 10, High: 12}}}
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return x[0] + x[1], nil }}
	res, err := Optimize(context.Background(), obj, Options{Acquisition: "grid", Suggester: gridSuggester{t},
		Batch: 2, Iters: 3, NoInit: true})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{0, 10}, {0, 11}, {0, 12}, {1, 10}, {1, 11}, {1, 12}}
	if len(res.Trials) != len(want) {
		t.Fatalf("%d trials", len(res.Trials))
	}
	for i, tr := range res.Trials {
		if tr.X[0] != want[i][0] || tr.X[1] != want[i][1] {
			t.Fatalf("trial %d at %v, want %v", i, tr.X, want[i])
		}
	}
}
