// Command stdoutjunk prints to stdout before serving, which breaks the
// go-plugin handshake.
package main

import (
	"context"
	"fmt"

	"github.com/tesbo/tesbo/sdk"
)

type one struct{}

func (one) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}, nil
}
func (one) Evaluate(context.Context, []float64) (float64, error) { return 1, nil }

func main() {
	fmt.Println("loading model weights... done")
	sdk.ServeObjective(one{})
}
