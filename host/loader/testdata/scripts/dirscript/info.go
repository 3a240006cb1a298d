package twofiles

import "github.com/tesbo/tesbo/sdk"

func Info() sdk.Info {
	return sdk.Info{Name: "two files", Params: []sdk.Param{{Name: "n", Kind: sdk.Int, Low: 0, High: 10}}}
}
