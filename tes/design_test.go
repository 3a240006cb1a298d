package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// farQuantile returns the 0.95 quantile of the distance from a uniform
// point of [m, 1 − m]^d to the nearest row of X: a space-filling point, the
// best of designCandidates uniform ones of that box, lies beyond it unless
// something is wrong (a uniform point does with probability 0.05).
func farQuantile(X *mat.Dense, m float64) float64 {
	_, d := X.Dims()
	rng := rand.New(rand.NewPCG(99, 1))
	known := make([][]float64, rowsOf(X))
	for i := range known {
		known[i] = X.RawRowView(i)
	}
	dist := make([]float64, 20000)
	x := make([]float64, d)
	for i := range dist {
		for j := range x {
			x[j] = m + (1-2*m)*rng.Float64()
		}
		dist[i] = math.Sqrt(nearestSq(x, known, nil))
	}
	slices.Sort(dist)
	return dist[len(dist)*95/100]
}

func nearest(x []float64, X *mat.Dense) float64 {
	known := make([][]float64, rowsOf(X))
	for i := range known {
		known[i] = X.RawRowView(i)
	}
	return math.Sqrt(nearestSq(x, known, nil))
}

// From 2 points in 3 dimensions the default acquisition first completes
// the design to d + 1 = 4 points: the proposals lie far from the data (and
// from each other), where TES's query in the trust region around the best
// point would lie close to it. A batch opens with the missing points and
// fills the rest as usual; pending points count towards the design.
func TestDeliverOpensWithDesign(t *testing.T) {
	ctx := context.Background()
	g := toyGP(t, 5, 2, 3, 0.3, 1e-4)
	far := farQuantile(g.X(), 0.2)
	propose := func(s deliverSettings, st *acq.State, q int) *mat.Dense {
		t.Helper()
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p.Settings = s
		X, err := p.Propose(ctx, st, q)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := X.Dims(); r != q {
			t.Fatalf("asked for %d points, got %d", q, r)
		}
		return X
	}
	x := propose(deliverSettings{}, deliverState(g, 1), 1).RawRowView(0)
	if dd := nearest(x, g.X()); dd < far {
		t.Fatalf("first proposal %v is %.3g from the data, want a space-filling point (≥ %.3g)", x, dd, far)
	}
	for name, st := range map[string]*acq.State{
		"DesignPoints < 0": deliverState(g, 1),
		"Evaluated = d+1":  {GP: g, Iter: 1, Rand: rand.New(rand.NewPCG(7, 1)), Evaluated: 4},
	} {
		s := deliverSettings{}
		if name == "DesignPoints < 0" {
			s.DesignPoints = -1
		}
		x := propose(s, st, 1).RawRowView(0)
		if dd := nearest(x, g.X()); dd >= far {
			t.Fatalf("%s: proposal %v is %.3g from the data, want TES's query near the best point", name, x, dd)
		}
	}

	X := propose(deliverSettings{}, deliverState(g, 1), 3)
	known := g.X()
	for i := range 2 {
		if dd := nearest(X.RawRowView(i), known); dd < far/2 {
			t.Fatalf("batch row %d %v is %.3g from the known points, want space-filling", i, X.RawRowView(i), dd)
		}
		known = stackRows(known, mat.NewDense(1, 3, X.RawRowView(i)))
	}
	if dd := nearest(X.RawRowView(2), g.X()); dd >= far {
		t.Fatalf("batch row 2 %v is %.3g from the data, want TES's query", X.RawRowView(2), dd)
	}

	st := deliverState(g, 1)
	st.Pending = mat.NewDense(1, 3, []float64{0.9, 0.1, 0.9})
	X = propose(deliverSettings{}, st, 3)
	if dd := nearest(X.RawRowView(0), stackRows(g.X(), st.Pending)); dd < far/2 {
		t.Fatalf("with (0.9, 0.1, 0.9) pending row 0 %v is %.3g from the known points, want space-filling", X.RawRowView(0), dd)
	}
	if dd := nearest(X.RawRowView(1), g.X()); dd >= far {
		t.Fatalf("with one point pending only one space-filling point is due; row 1 %v is %.3g from the data", X.RawRowView(1), dd)
	}
}

// With a sized batch the opening design is proposed alone: the points
// still missing, at most maxQ of them.
func TestDeliverSizedDesign(t *testing.T) {
	g := toyGP(t, 5, 2, 3, 0.3, 1e-4)
	p, err := newDeliver(acq.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for maxQ, want := range map[int]int{2: 2, 5: 2} {
		X, err := p.ProposeSized(context.Background(), deliverState(g, 1), maxQ, acq.GainRule{})
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := X.Dims(); r != want {
			t.Fatalf("maxQ %d: %d points, want the %d missing from the design", maxQ, r, want)
		}
	}
}

// spaceFilling is a function of its random stream, stays in the cube and
// keeps its points apart from the known ones and from each other.
func TestSpaceFilling(t *testing.T) {
	X := mat.NewDense(2, 2, []float64{0.1, 0.1, 0.5, 0.5})
	a := spaceFilling(rand.New(rand.NewPCG(1, 2)), 3, X, nil, nil, nil)
	b := spaceFilling(rand.New(rand.NewPCG(1, 2)), 3, X, nil, nil, nil)
	if !mat.Equal(a, b) {
		t.Fatalf("the same stream gave %v and %v", mat.Formatted(a), mat.Formatted(b))
	}
	far := farQuantile(X, 0)
	known := X
	for i := range 3 {
		x := a.RawRowView(i)
		for _, v := range x {
			if v < 0 || v > 1 {
				t.Fatalf("point %v leaves the unit cube", x)
			}
		}
		if dd := nearest(x, known); dd < far/2 {
			t.Fatalf("point %d %v is %.3g from the known points", i, x, dd)
		}
		known = stackRows(known, mat.NewDense(1, 2, x))
	}
}

// The design is drawn from the iteration's random stream: the same state
// proposes the same point, another stream another one.
func TestDeliverDesignFollowsStream(t *testing.T) {
	g := toyGP(t, 5, 2, 3, 0.3, 1e-4)
	first := func(seed uint64) []float64 {
		p, err := newDeliver(acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st := &acq.State{GP: g, Iter: 1, Rand: rand.New(rand.NewPCG(seed, 1))}
		X, err := p.Propose(context.Background(), st, 1)
		if err != nil {
			t.Fatal(err)
		}
		return X.RawRowView(0)
	}
	a, b, c := first(3), first(3), first(4)
	if !slices.Equal(a, b) {
		t.Fatalf("the same stream proposed %v and %v", a, b)
	}
	if slices.Equal(a, c) {
		t.Fatalf("two streams proposed the same design point %v", a)
	}
}

// A categorical coordinate's choices are unordered: the design spreads
// over all of them instead of favouring the first and last, as a
// Euclidean maximin over the bins would.
func TestSpaceFillingCategorical(t *testing.T) {
	const n = 5
	X := mat.NewDense(2, 3, []float64{0.2, 0.3, 0.1, 0.7, 0.6, 0.9})
	counts := make([]int, n)
	for seed := range uint64(600) {
		P := spaceFilling(rand.New(rand.NewPCG(seed, 9)), 1, X, nil, []int{0, 0, n}, nil)
		counts[choice(P.At(0, 2), n)]++
	}
	// Known points hold choices 0 and 4; every candidate differing from
	// both scores the same along the categorical, so choices 1–3 should be
	// about as frequent as 0 and 4 are rare.
	for c := 1; c <= 3; c++ {
		if counts[c] < 100 {
			t.Fatalf("choice counts %v: middle choice %d is rare", counts, c)
		}
	}
}

// The design keeps a continuous coordinate's points DesignMargin from its
// bounds, and leaves a categorical or integer coordinate's first and last
// values as likely as the others.
func TestDesignMargins(t *testing.T) {
	m := designMargins(4, 0.2, []int{0, 3, 0, 0}, []float64{0, 0, 0.25, 0})
	if !slices.Equal(m, []float64{0.2, 0, 0, 0.2}) {
		t.Fatalf("margins %v, want [0.2 0 0 0.2]", m)
	}
	if m := designMargins(4, -1, nil, nil); m != nil {
		t.Fatalf("a negative margin gave %v, want none", m)
	}
	X := mat.NewDense(2, 4, []float64{0.5, 0.4, 0.5, 0.5, 0.45, 0.5, 0.55, 0.4})
	lo, hi := []float64{1, 1, 1, 1}, []float64{0, 0, 0, 0}
	for seed := range uint64(200) {
		P := spaceFilling(rand.New(rand.NewPCG(seed, 3)), 2, X, nil, []int{0, 3, 0, 0}, m)
		for i := range 2 {
			for j, v := range P.RawRowView(i) {
				lo[j], hi[j] = math.Min(lo[j], v), math.Max(hi[j], v)
			}
		}
	}
	for _, j := range []int{0, 3} {
		if lo[j] < 0.2 || hi[j] > 0.8 {
			t.Fatalf("continuous coordinate %d ranged over [%.3f, %.3f], want within [0.2, 0.8]", j, lo[j], hi[j])
		}
	}
	for _, j := range []int{1, 2} {
		if lo[j] > 0.1 || hi[j] < 0.9 {
			t.Fatalf("coordinate %d without a margin ranged over [%.3f, %.3f], want its ends reached", j, lo[j], hi[j])
		}
	}
}

// The default opening stops at 4 points however many dimensions the
// space has; Settings.DesignPoints still asks for more.
func TestDesignCapsAtFour(t *testing.T) {
	g := toyGP(t, 5, 2, 6, 0.3, 1e-4)
	for want, s := range map[int]deliverSettings{2: {}, 5: {DesignPoints: 7}} {
		F := s.withDefaults().design(deliverState(g, 1), 8)
		if r := rowsOf(F); r != want {
			t.Fatalf("DesignPoints %d in 6 dimensions from 2 points: %d design points, want %d", s.DesignPoints, r, want)
		}
	}
}
