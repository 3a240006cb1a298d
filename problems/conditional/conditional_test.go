package conditional

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// The conditional problem reaches f* in branch c, refuses points where an
// inactive parameter has a value (or an active one has none), and its
// flattened twin takes every coordinate and computes the same function.
func TestBranches(t *testing.T) {
	ctx := context.Background()
	c, _ := New("cond/branches")
	flat, _ := New("cond/branches-flat")
	for _, o := range []*Objective{c, flat} {
		info, _ := o.Info(ctx)
		if err := sdk.Space(info.Params).Validate(); err != nil {
			t.Fatal(err)
		}
		if sdk.Space(info.Params).Conditional() == o.flat {
			t.Fatalf("%s: conditional %v", info.Name, !o.flat)
		}
	}
	nan := math.NaN()
	best := []float64{2, nan, nan, nan, 0.8, 0.3, 0.3}
	if v, err := c.Evaluate(ctx, best); err != nil || v != branchesOptimum {
		t.Fatalf("f(x*) = %v, %v; want %v", v, err, branchesOptimum)
	}
	if v, err := flat.Evaluate(ctx, []float64{2, 0.1, 0.2, 3, 0.8, 0.3, 0.3}); err != nil || v != branchesOptimum {
		t.Fatalf("flat f(x*) = %v, %v", v, err)
	}
	for _, bad := range [][]float64{
		{2, 0.5, nan, nan, 0.8, 0.3, 0.3}, // x1 inactive in c but given
		{0, nan, 0.5, nan, nan, nan, 0.3}, // x1 active in a but NaN
	} {
		if _, err := c.Evaluate(ctx, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

// cond/hartmann: each branch's best value where its mirrored Hartmann-6
// peaks, f* only in branch momentum, no random point above f*, the
// flattened twin the same function, and out-of-range or misplaced values
// refused.
func TestHartmann(t *testing.T) {
	ctx := context.Background()
	c, _ := New("cond/hartmann")
	flat, _ := New("cond/hartmann-flat")
	info, _ := c.Info(ctx)
	if err := info.Validate(); err != nil || len(info.Params) != 9 || *info.Optimum != hartmann6.Optimum {
		t.Fatalf("Info %+v: %v", info, err)
	}
	xs := hartmann6.Maximizers[0]
	nan := math.NaN()
	at := func(opt float64, u []float64, m, b float64) []float64 {
		return append(append([]float64{opt}, u...), m, b)
	}
	mirror := func(j int) []float64 {
		u := slices.Clone(xs)
		u[j] = 1 - u[j]
		return u
	}
	for _, tc := range []struct {
		x    []float64
		want float64
	}{
		{at(1, xs, 0.75, nan), hartmann6.Optimum},
		{at(0, mirror(1), nan, nan), hartmann6.Optimum - 0.4},
		{at(2, mirror(0), nan, 0.3), hartmann6.Optimum - 0.2},
		{at(1, xs, 0.25, nan), hartmann6.Optimum - 0.125},
	} {
		v, err := c.Evaluate(ctx, tc.x)
		if err != nil || math.Abs(v-tc.want) > 1e-12 {
			t.Errorf("f(%v) = %v, %v; want %v", tc.x, v, err, tc.want)
		}
		fx := slices.Clone(tc.x)
		for i := range fx {
			if math.IsNaN(fx[i]) {
				fx[i] = 0.9
			}
		}
		if fv, err := flat.Evaluate(ctx, fx); err != nil || fv != v {
			t.Errorf("flat f(%v) = %v, %v; want %v", fx, fv, err, v)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		x := make([]float64, 9)
		for i := range x {
			x[i] = rng.Float64()
		}
		x[0] = float64(rng.IntN(3))
		if v, _ := flat.Evaluate(ctx, x); v > hartmann6.Optimum {
			t.Fatalf("f(%v) = %v above f*", x, v)
		}
	}
	for _, bad := range [][]float64{
		at(1, xs, nan, nan), // momentum active but NaN
		at(2, xs, 0.5, 0.3), // momentum inactive but given
		at(1, xs, 1.5, nan), // momentum out of range
		at(3, xs, nan, nan), // no such optimizer
	} {
		if _, err := c.Evaluate(ctx, bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
