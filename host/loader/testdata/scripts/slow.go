package slow

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

// Evaluate takes x seconds (a legitimately slow objective).
func Evaluate(ctx context.Context, x []float64) (float64, error) {
	select {
	case <-time.After(time.Duration(x[0] * float64(time.Second))):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return x[0], nil
}
