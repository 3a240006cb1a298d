package classify

import (
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Beyond maxPoints the classifier fitted to its subset still finds the
// failing region: on uniform test points it agrees with the true rule
// (failure where x₀ + x₁ > 1.6) about as well as on data of maxPoints.
func TestFitManyPoints(t *testing.T) {
	accuracy := func(n int) float64 {
		X, ok := failingCorner(n, 6)
		c, err := Fit(X, ok)
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := c.xs.Dims(); r > maxPoints {
			t.Fatalf("n = %d: fitted to %d points, want at most %d", n, r, maxPoints)
		}
		rng := rand.New(rand.NewPCG(5, 6))
		right, x := 0, make([]float64, 6)
		const tests = 2000
		for range tests {
			for j := range x {
				x[j] = rng.Float64()
			}
			if (c.prob(x, nil) > 0.5) == (x[0]+x[1] <= 1.6) {
				right++
			}
		}
		return float64(right) / tests
	}
	small, large := accuracy(maxPoints), accuracy(1500)
	t.Logf("accuracy on uniform test points: %d points %.3f, 1500 points %.3f", maxPoints, small, large)
	if large < 0.95 || large < small-0.02 {
		t.Fatalf("fitted to 1500 points the classifier is right on %.3f of test points (%d points: %.3f), want ≥ 0.95 and no worse than 0.02 below", large, maxPoints, small)
	}
}

// subset keeps every failure (when they are few), each one's nearest
// success, and fills up to m with successes, in the original order.
func TestSubset(t *testing.T) {
	X, ok := failingCorner(1000, 3)
	sub, subOK := subset(X, ok, 120)
	if r, _ := sub.Dims(); r != 120 || len(subOK) != 120 {
		t.Fatalf("subset has %d rows and %d labels, want 120", r, len(subOK))
	}
	failed := 0
	for _, v := range ok {
		if !v {
			failed++
		}
	}
	keptFailed := 0
	for _, v := range subOK {
		if !v {
			keptFailed++
		}
	}
	if want := min(failed, 60); keptFailed != want {
		t.Fatalf("kept %d failures of %d, want %d", keptFailed, failed, want)
	}
	// Rows keep the original order: the subset's rows appear in X in order.
	pos := 0
	for k := range 120 {
		row := sub.RawRowView(k)
		for pos < 1000 && !slices.Equal(X.RawRowView(pos), row) {
			pos++
		}
		if pos == 1000 {
			t.Fatalf("subset row %d is not in X after the previous one", k)
		}
	}
	// Each kept failure's nearest success is kept.
	var succ []int
	for i, v := range ok {
		if v {
			succ = append(succ, i)
		}
	}
	inSub := func(i int) bool {
		for k := range 120 {
			if slices.Equal(sub.RawRowView(k), X.RawRowView(i)) {
				return true
			}
		}
		return false
	}
	for i, v := range ok {
		if !v && inSub(i) {
			j, _ := nearest(X, i, succ)
			if !inSub(j) {
				t.Fatalf("failure %d is kept but its nearest success %d is not", i, j)
			}
		}
	}
	if s, _ := subset(mat.NewDense(2, 1, []float64{0.1, 0.9}), []bool{true, false}, 120); s.RawMatrix().Rows != 2 {
		t.Fatalf("a subset of 2 points has %d rows", s.RawMatrix().Rows)
	}
}
