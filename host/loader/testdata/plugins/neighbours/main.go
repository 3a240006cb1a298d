// Command neighbours has healthy but slow evaluations (1.5 s) and one bad
// region: for x ≥ 5/6 it never answers, ignoring its context. A Latin
// hypercube of 6 points has exactly one point there.
package main

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}, nil
}

func (obj) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if x[0] >= 5.0/6 {
		for {
			time.Sleep(time.Hour)
		}
	}
	select {
	case <-time.After(1500 * time.Millisecond):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return x[0], nil
}

func main() { sdk.ServeObjective(obj{}) }
