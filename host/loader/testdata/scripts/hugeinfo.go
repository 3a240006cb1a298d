package hugeinfo

import (
	"context"
	"strings"

	"github.com/tesbo/tesbo/sdk"
)

// Info answers with a 20 MiB objective name: more than a plugin's message
// to the host may hold (loader.MaxPluginMessage).
func Info() sdk.Info {
	return sdk.Info{Name: strings.Repeat("x", 20<<20), Params: []sdk.Param{{Name: "a", Kind: sdk.Float, Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) { return x[0], nil }
