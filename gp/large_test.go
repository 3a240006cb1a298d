package gp

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

// From linalg.BlockedMin on, the right-hand triangular solves of Joint,
// JointVJP, Add, Condition and the conditioned prediction and its gradient
// use the blocked solves; they agree with the Trsm path to 1e-9 relative.
func TestLargeNSolvesMatchTrsm(t *testing.T) {
	const d, s, q = 3, 5, 6
	n := linalg.BlockedMin + 61
	if testing.Short() {
		t.Skip("n > 1024 GP")
	}
	g := testProblem(t, NewMatern52([]float64{0.3, 0.4, 0.5}, 1), n, 1e-3, 41)
	rng := newRNG(43)
	Xs, XB := randDense(rng, s, d), randDense(rng, q, d)
	gA := mat.NewDense(q, s, randVec(rng, q*s))
	gS := mat.NewDense(q, q, randVec(rng, q*q))
	gb, gm := randVec(rng, q), randVec(rng, q)
	run := func() [][]float64 {
		c, err := g.Condition(Xs)
		if err != nil {
			t.Fatal(err)
		}
		A, b, S := c.Predict(XB)
		m, cov := g.Joint(XB)
		g2, err := g.Add(XB, gb)
		if err != nil {
			t.Fatal(err)
		}
		mu, v := g2.MeanVar(Xs.RawRowView(0))
		return [][]float64{denseData(A), b, denseData(S), denseData(c.predictVJP(XB, gA, gb, gS)),
			m, denseData(cov), denseData(g.JointVJP(XB, gm, gS)), {mu, v}}
	}
	got := run()
	defer func(m int) { rightSolveMin = m }(rightSolveMin)
	rightSolveMin = n + 1
	want := run()
	for i, name := range []string{"A", "b", "S", "PredictVJP", "Joint mean", "Joint cov", "JointVJP", "Add"} {
		checkClose(t, name, got[i], want[i], 1e-9, 1e-12)
	}
}
