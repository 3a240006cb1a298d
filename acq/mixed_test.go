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

// Beyond MaxEnumerate the categorical step changes one coordinate at a
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
