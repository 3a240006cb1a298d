package bad

import "github.com/tesbo/tesbo/sdk"

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(x []float64) float64 { return x[0] }
