package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// gridMeanMax returns the largest posterior mean over a dense grid of
// [0,1]² (step 1/200).
func gridMeanMax(g *gp.GP) float64 {
	best := math.Inf(-1)
	x := make([]float64, 2)
	for i := 0; i <= 200; i++ {
		for j := 0; j <= 200; j++ {
			x[0], x[1] = float64(i)/200, float64(j)/200
			m, _ := g.MeanVar(x)
			best = math.Max(best, m)
		}
	}
	return best
}

func deliverState(g *gp.GP, iter int) *acq.State {
	return &acq.State{GP: g, Iter: iter, Rand: rand.New(rand.NewPCG(7, uint64(iter)))}
}

// With one point per batch, every fourth iteration evaluates x̄ = argmax μ
// (when no evaluated point is as good) and the others are TES_ep's queries; batches of
// q > 1 spend their first slot on x̄ and the rest on TES.
func TestDeliverEvaluatesXBar(t *testing.T) {
	ctx := context.Background()
	g := toyGP(t, 3, 12, 2, 0.25, 1e-4)
	top := gridMeanMax(g)
	means := make([]float64, 12)
	g.Predict(g.X(), means, nil)
	if top <= mat.Max(mat.NewVecDense(12, means))+1e-6 {
		t.Fatalf("test GP's mean maximum %v is at an evaluated point: pick another", top)
	}
	isXBar := func(x []float64) bool {
		m, _ := g.MeanVar(x)
		// x̄ maximizes μ at least as well as a 1/200 grid.
		return m >= top-1e-9
	}
	p, err := newDeliver(acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	X, err := p.Propose(ctx, deliverState(g, 4), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !isXBar(X.RawRowView(0)) {
		m, _ := g.MeanVar(X.RawRowView(0))
		t.Fatalf("iteration 4 proposed %v with μ %v, want x̄ (μ ≥ %v)", X.RawRowView(0), m, top)
	}
	X, err = p.Propose(ctx, deliverState(g, 3), 1)
	if err != nil {
		t.Fatal(err)
	}
	if isXBar(X.RawRowView(0)) {
		t.Fatalf("iteration 3 proposed x̄ %v, want TES's query", X.RawRowView(0))
	}
	X, err = p.Propose(ctx, deliverState(g, 3), 3)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := X.Dims(); r != 3 || !isXBar(X.RawRowView(0)) || isXBar(X.RawRowView(1)) || isXBar(X.RawRowView(2)) {
		t.Fatalf("batch of 3: %v, want x̄ first and two TES points", mat.Formatted(X))
	}
	for _, v := range X.RawMatrix().Data {
		if v < 0 || v > 1 {
			t.Fatalf("batch leaves the unit cube: %v", mat.Formatted(X))
		}
	}
}

// x̄ is not spent when it is already evaluated (here: every point counts as
// "near" one evaluated) nor when ExploitEvery < 0 for single points.
func TestDeliverSkipsXBarWhenNotWorth(t *testing.T) {
	ctx := context.Background()
	g := toyGP(t, 3, 12, 2, 0.25, 1e-4)
	top := gridMeanMax(g)
	for _, s := range []deliverSettings{{MinDistance: 1e9}, {ExploitEvery: -1}} {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings = s
		X, err := p.Propose(ctx, deliverState(g, 4), 1)
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := g.MeanVar(X.RawRowView(0)); m >= top-1e-9 {
			t.Fatalf("settings %+v: proposed x̄ %v", s, X.RawRowView(0))
		}
	}
}

// The default acquisition asks the host for warped outputs; NoWarp and the
// paper's tes-ep do not.
func TestDeliverWarpsOutputs(t *testing.T) {
	p, err := newDeliver(acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var w acq.OutputWarper = p
	if !w.WarpOutputs() {
		t.Error("tes does not ask for warped outputs")
	}
	p.Settings.NoWarp = true
	if w.WarpOutputs() {
		t.Error("tes with NoWarp asks for warped outputs")
	}
	ep, err := acq.Lookup("tes-ep", acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ep.(acq.OutputWarper); ok {
		t.Error("tes-ep asks for warped outputs: the paper's acquisition must stay unchanged")
	}
}

// A warm-started study (State.Imported > 0) evaluates x̄ at its first
// iteration even when x̄ lies next to an evaluated point (here every point
// counts as next to one: MinDistance 1e9), since all of them were
// imported; then x̄'s single-point schedule counts from that iteration (5,
// 9, … instead of 4, 8, …), and once the study has evaluated a point of
// its own, x̄ next to an evaluated point is skipped as before. A study
// that was not warm-started is unchanged, and a pending x̄ is never
// proposed again.
func TestDeliverWarmStartEvaluatesXBarFirst(t *testing.T) {
	ctx := context.Background()
	g := toyGP(t, 3, 12, 2, 0.25, 1e-4)
	top := gridMeanMax(g)
	isXBar := func(X *mat.Dense) bool {
		m, _ := g.MeanVar(X.RawRowView(0))
		return m >= top-1e-9
	}
	for _, c := range []struct {
		name                     string
		iter, evaluated, imports int
		minDist                  float64
		pendingXBar              bool
		want                     bool
	}{
		{"warm-started, first iteration, x̄ next to an imported point", 1, 12, 12, 1e9, false, true},
		{"not warm-started, iteration 1", 1, 12, 0, 0, false, false},
		{"not warm-started, iteration 4", 4, 12, 0, 0, false, true},
		{"warm-started, iteration 4", 4, 15, 12, 0, false, false},
		{"warm-started, iteration 5", 5, 16, 12, 0, false, true},
		{"warm-started, iteration 5, x̄ next to an evaluated point", 5, 16, 12, 1e9, false, false},
		{"warm-started, first iteration, x̄ pending", 1, 12, 12, 0, true, false},
	} {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings.MinDistance = c.minDist
		st := deliverState(g, c.iter)
		st.Evaluated, st.Imported = c.evaluated, c.imports
		if c.pendingXBar {
			xbar, _, _, err := p.recommendation(ctx, deliverState(g, c.iter), p.Settings.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			st.Pending = xbar
		}
		X, err := p.Propose(ctx, st, 1)
		if err != nil {
			t.Fatal(err)
		}
		if got := isXBar(X); got != c.want {
			t.Errorf("%s: proposed x̄ %v, want %v (%v)", c.name, got, c.want, X.RawRowView(0))
		}
	}
}
