package acq

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// needleFunc is α(x) = −(x₀−0.3)² + 3·[choices of x₁, x₂ = (5, 2)] on a
// continuous coordinate and two categorical ones with n₁, n₂ choices (only
// the joint change of both finds the bonus), with its gradient.
type needleFunc struct{ n1, n2 int }

func (f needleFunc) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	v := -(x[0] - 0.3) * (x[0] - 0.3)
	if gp.Bin(x[1], f.n1) == 5 && gp.Bin(x[2], f.n2) == 2 {
		v += 3
	}
	if grad != nil {
		grad.Set(0, 0, -2*(x[0]-0.3))
	}
	return v
}

func (needleFunc) HasGradient() bool { return true }

// With 8×8 = 64 combinations Maximize enumerates them exactly and finds the
// one best combination even when no raw sample has it, with the continuous
// coordinate at its optimum and the choices at bin centres.
func TestMaximizeMixedEnumerates(t *testing.T) {
	f := needleFunc{8, 8}
	s := OptimizeSettings{RawSamples: 4, Restarts: 1, Workers: 1}
	X, v, err := MaximizeMixed(context.Background(), f, 1, 3, []int{0, 8, 8}, s, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	x := X.RawRowView(0)
	if gp.Bin(x[1], 8) != 5 || gp.Bin(x[2], 8) != 2 || math.Abs(x[0]-0.3) > 1e-4 || math.Abs(v-3) > 1e-8 {
		t.Fatalf("x = %v, α = %v: want choices (5, 2), x₀ = 0.3, α = 3", x, v)
	}
	if x[1] != centre(5, 8) || x[2] != centre(2, 8) {
		t.Fatalf("choices not at bin centres: %v", x)
	}
}

// Beyond maxEnumerate the categorical step changes one coordinate at a
// time: a separable bonus is found, and every categorical coordinate of a
// batch result sits at a bin centre.
func TestMaximizeMixedCoordinateMoves(t *testing.T) {
	f := funcOf(func(X, g *mat.Dense) float64 {
		x := X.RawRowView(0)
		if g != nil {
			g.Set(0, 0, -2*(x[0]-0.7))
		}
		v := -(x[0] - 0.7) * (x[0] - 0.7)
		if gp.Bin(x[1], 9) == 7 {
			v++
		}
		if gp.Bin(x[2], 9) == 1 {
			v++
		}
		return v
	})
	s := OptimizeSettings{RawSamples: 4, Restarts: 1, Workers: 1}
	X, v, err := MaximizeMixed(context.Background(), f, 1, 3, []int{0, 9, 9}, s, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	x := X.RawRowView(0)
	if gp.Bin(x[1], 9) != 7 || gp.Bin(x[2], 9) != 1 || math.Abs(v-2) > 1e-6 {
		t.Fatalf("x = %v, α = %v", x, v)
	}
}

// A continuous space (nil categories) gives exactly Maximize's result.
func TestMaximizeMixedContinuousUnchanged(t *testing.T) {
	f := needleFunc{8, 8}
	s := OptimizeSettings{RawSamples: 16, Restarts: 2, Workers: 1}
	a, va, _ := Maximize(context.Background(), f, 2, 3, s, rand.New(rand.NewPCG(5, 6)))
	b, vb, _ := MaximizeMixed(context.Background(), f, 2, 3, []int{0, 0, 0}, s, rand.New(rand.NewPCG(5, 6)))
	if !mat.Equal(a, b) || va != vb {
		t.Fatal("all-continuous MaximizeMixed differs from Maximize")
	}
}

// mixedMeanGP is a GP on one continuous coordinate and one categorical of
// 3 choices whose largest observation is in choice 2 (at x₀ = 0.8).
func mixedMeanGP(t *testing.T) *gp.GP {
	t.Helper()
	X := mat.NewDense(5, 2, []float64{
		0.2, centre(0, 3), 0.5, centre(0, 3),
		0.3, centre(1, 3),
		0.8, centre(2, 3), 0.6, centre(2, 3),
	})
	y := []float64{0.5, 0.2, 0, 1.5, 1}
	g, err := gp.New(gp.NewMixed([]int{0, 3}, false, []float64{0.3, 1}, 1), 1e-4, X, y)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// On a mixed space MaximizeMean keeps the starts' choices: from a start
// in choice 0 it refines x₀ within choice 0 (the mean's global maximum is
// in choice 2, where the unrestricted search goes), and without starts it
// stays among the observed choices.
func TestMaximizeMeanKeepsChoices(t *testing.T) {
	g := mixedMeanGP(t)
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(7, 8)) }
	free, _, err := MaximizeMixed(context.Background(), PosteriorMean{GP: g}, 1, 2, []int{0, 3}, OptimizeSettings{}, rng())
	if err != nil {
		t.Fatal(err)
	}
	if c := gp.Bin(free.At(0, 1), 3); c != 2 {
		t.Fatalf("unrestricted argmax μ in choice %d, want 2 (the test needs it elsewhere)", c)
	}
	start := mat.NewDense(1, 2, []float64{0.2, centre(0, 3)})
	X, m, err := MaximizeMean(context.Background(), g, start, OptimizeSettings{}, rng())
	if err != nil {
		t.Fatal(err)
	}
	if c := gp.Bin(X.At(0, 1), 3); c != 0 {
		t.Fatalf("x̄ = %v in choice %d, want the start's choice 0", X.RawRowView(0), c)
	}
	if m0, _ := g.MeanVar(start.RawRowView(0)); !(m >= m0) {
		t.Fatalf("μ(x̄) = %v below μ at the start %v", m, m0)
	}
	X, _, err = MaximizeMean(context.Background(), g, nil, OptimizeSettings{}, rng())
	if err != nil {
		t.Fatal(err)
	}
	if c := gp.Bin(X.At(0, 1), 3); c != 2 {
		t.Fatalf("x̄ without starts in choice %d, want 2", c)
	}
}

// Without any observation in a combination, MaximizeMean does not
// recommend it: the choices of 2 categoricals are restricted to the 3
// observed combinations out of 9, though the mean is highest at the
// unobserved (1, 1) (choice 1 of either is good, (0, 0) is bad).
func TestMaximizeMeanObservedCombinations(t *testing.T) {
	X := mat.NewDense(3, 3, []float64{
		0.5, centre(1, 3), centre(0, 3),
		0.5, centre(0, 3), centre(1, 3),
		0.5, centre(0, 3), centre(0, 3),
	})
	g, err := gp.New(gp.NewMixed([]int{0, 3, 3}, false, []float64{0.3, 3, 3}, 1), 1e-4, X, []float64{1, 1, -1})
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := g.MeanVar([]float64{0.5, centre(1, 3), centre(1, 3)}); !(m > 1) {
		t.Fatalf("μ at the unobserved (1, 1) = %v, want > 1 (the test needs it)", m)
	}
	x, _, err := MaximizeMean(context.Background(), g, nil, OptimizeSettings{}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := gp.Bin(x.At(0, 1), 3), gp.Bin(x.At(0, 2), 3)
	if !(c1 == 1 && c2 == 0 || c1 == 0 && c2 == 1) {
		t.Fatalf("x̄ = %v in combination (%d, %d), not an observed one", x.RawRowView(0), c1, c2)
	}
}
