package bench

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/usersuite"
	"github.com/tesbo/tesbo/sdk"
)

// Every user-suite problem's optimizer survives the host's search-space transform
// (Int parameters to their bin centres, LogFloat in log scale) there and
// back, and every point the host makes of a unit-cube point is in the
// space (integers for Int, inside the bounds) and evaluates (or fails in
// the problem's failing region only).
func TestUserSuiteSpaceRoundTrip(t *testing.T) {
	ctx := context.Background()
	kinds := map[sdk.ParamKind]int{}
	for _, p := range usersuite.Problems() {
		sp, err := host.NewSpace(p.Params)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		u, err := sp.ToUnit(p.Best)
		if err != nil {
			t.Fatalf("%s: optimizer %v: %v", p.Name, p.Best, err)
		}
		back := sp.ToNative(u)
		for j, pr := range p.Params {
			kinds[pr.Kind]++
			if d := math.Abs(back[j] - p.Best[j]); d > 1e-12*math.Max(1, math.Abs(p.Best[j])) {
				t.Errorf("%s %s (%v): %v → %v → %v", p.Name, pr.Name, pr.Kind, p.Best[j], u[j], back[j])
			}
		}
		o, _ := usersuite.New(usersuite.Prefix + p.Name)
		rng := rand.New(rand.NewPCG(8, 8))
		for range 300 {
			for j := range u {
				u[j] = rng.Float64()
			}
			x := sp.ToNative(u)
			for j, pr := range p.Params {
				if x[j] < pr.Low || x[j] > pr.High || (pr.Kind == sdk.Int && x[j] != math.Round(x[j])) {
					t.Fatalf("%s: host point %v has %s = %v outside its %v space", p.Name, x, pr.Name, x[j], pr.Kind)
				}
			}
			if _, err := o.Evaluate(ctx, x); err != nil && !errors.Is(err, usersuite.ErrFailed) {
				t.Fatalf("%s: host point %v: %v", p.Name, x, err)
			}
		}
	}
	if kinds[sdk.Int] == 0 || kinds[sdk.LogFloat] == 0 {
		t.Errorf("the suite has %d Int and %d LogFloat parameters, want both", kinds[sdk.Int], kinds[sdk.LogFloat])
	}
}
