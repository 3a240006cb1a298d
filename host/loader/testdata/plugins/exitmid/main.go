// Command exitmid exits in the middle of an Evaluate call when x[0] = 13,
// like a plugin killed by the OOM killer or calling os.Exit, and when
// x[0] = 14 after logging 300 lines. It logs with
// the log package, which writes to the process's real stderr at once (what
// a plugin writes to os.Stderr after serving travels through go-plugin's
// stdio stream and can be lost when the process dies).
package main

import (
	"context"
	"log"
	"os"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "x", Low: -20, High: 20}}}, nil
}

func (obj) Evaluate(_ context.Context, x []float64) (float64, error) {
	if x[0] == 14 {
		for i := range 300 {
			log.Printf("exitmid: spam %d", i)
		}
		os.Exit(7)
	}
	if x[0] == 13 {
		log.Print("exitmid: out of memory (simulated)")
		os.Exit(7)
	}
	return 2 * x[0], nil
}

func main() { sdk.ServeObjective(obj{}) }
