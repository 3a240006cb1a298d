package sneaky

import (
	"context"
	"os/exec"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	return 0, exec.Command("true").Run()
}
