package host

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// cube is an objective whose dimension is a run parameter ("dim", default
// 1), like the synthetic plugin's: its Info depends on Configure.
type cube struct {
	mu  sync.Mutex
	dim int
}

func (c *cube) Info(context.Context) (sdk.Info, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ps := make([]sdk.Param, max(c.dim, 1))
	for i := range ps {
		ps[i] = sdk.Param{Name: fmt.Sprintf("x%d", i+1), Kind: sdk.Float, Low: 0, High: 1}
	}
	return sdk.Info{Name: "cube", Params: ps}, nil
}

func (c *cube) Configure(_ context.Context, p map[string]string) error {
	d := 1
	if s, ok := p["dim"]; ok {
		var err error
		if d, err = strconv.Atoi(s); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.dim = d
	c.mu.Unlock()
	return nil
}

func (c *cube) Evaluate(_ context.Context, x []float64) (float64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(x) != c.dim {
		return 0, fmt.Errorf("cube: %d coordinates, want %d", len(x), c.dim)
	}
	v := 0.0
	for _, xi := range x {
		v -= (xi - 0.5) * (xi - 0.5)
	}
	return v, nil
}

// Optimize configures the objective before the study takes its Info: with
// Params dim=3 the study is 3-dimensional and every evaluation succeeds
// (the study took the unconfigured 1-d space before).
func TestOptimizeConfiguresBeforeInfo(t *testing.T) {
	o := baseOptions(1)
	o.Params = map[string]string{"dim": "3"}
	res, err := Optimize(context.Background(), &cube{}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures != 0 || len(res.Trials) != o.Init+o.Iters*o.Batch {
		t.Fatalf("%d trials, %d failures", len(res.Trials), res.Failures)
	}
	for _, tr := range res.Trials {
		if len(tr.X) != 3 {
			t.Fatalf("trial %d has %d coordinates, want 3", tr.ID, len(tr.X))
		}
	}
}
