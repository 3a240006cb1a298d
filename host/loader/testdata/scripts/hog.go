package hog

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

var keep [][]byte

// Evaluate allocates without bound for x > 0.5 (64 MiB at a time, never
// touched, so the machine's memory is not really used until a limit stops
// it).
func Evaluate(ctx context.Context, x []float64) (float64, error) {
	for x[0] > 0.5 {
		keep = append(keep, make([]byte, 64<<20))
	}
	return x[0], nil
}
