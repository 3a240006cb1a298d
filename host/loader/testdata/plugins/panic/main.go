// Command panic panics inside Evaluate when x[0] = 13; with x[0] = 14 it
// panics in a goroutine, which no recover can catch and kills the process.
package main

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

type obj struct{}

func (obj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Params: []sdk.Param{{Name: "x", Low: -20, High: 20}}}, nil
}

func (obj) Evaluate(_ context.Context, x []float64) (float64, error) {
	switch x[0] {
	case 13:
		var m map[string]int
		m["boom"]++ // assignment to entry in nil map
	case 14:
		go func() { panic("boom in a goroutine") }()
		time.Sleep(time.Minute)
	}
	return x[0] + 1, nil
}

func main() { sdk.ServeObjective(obj{}) }
