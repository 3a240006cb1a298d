package conditional

import (
	"context"
	"math"
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
	if v, err := c.Evaluate(ctx, best); err != nil || v != optimum {
		t.Fatalf("f(x*) = %v, %v; want %v", v, err, optimum)
	}
	if v, err := flat.Evaluate(ctx, []float64{2, 0.1, 0.2, 3, 0.8, 0.3, 0.3}); err != nil || v != optimum {
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
