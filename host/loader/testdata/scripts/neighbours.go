package neighbours

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

// Evaluate is healthy but slow (1.5 s), except that for x ≥ 5/6 it never
// answers, ignoring its context. A Latin hypercube of 6 points has exactly
// one point there.
func Evaluate(ctx context.Context, x []float64) (float64, error) {
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
