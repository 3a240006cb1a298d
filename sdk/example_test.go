package sdk_test

import (
	"context"
	"fmt"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

// sphere is a whole objective: its space and its function.
type sphere struct{}

func (sphere) Info(context.Context) (sdk.Info, error) {
	best := 0.0
	return sdk.Info{
		Name: "sphere",
		Params: []sdk.Param{
			{Name: "x", Kind: sdk.Float, Low: -1, High: 1},
			{Name: "layers", Kind: sdk.Int, Low: 1, High: 8},
			{Name: "lr", Kind: sdk.LogFloat, Low: 1e-4, High: 1e-1},
		},
		Minimize: true,
		Optimum:  &best,
	}, nil
}

func (sphere) Evaluate(_ context.Context, x []float64) (float64, error) {
	l := math.Log10(x[2]) + 2.5
	return x[0]*x[0] + (x[1]-4)*(x[1]-4)/16 + l*l, nil
}

// A plugin's main serves its objective and nothing else:
//
//	func main() { sdk.ServeObjective(sphere{}) }
//
// The host then calls Info once and Evaluate for each trial, as here.
func ExampleServeObjective() {
	var obj sdk.Objective = sphere{}
	info, _ := obj.Info(context.Background())
	y, _ := obj.Evaluate(context.Background(), []float64{0.5, 4, 0.01})
	fmt.Printf("%s: %d parameters, f = %.4g\n", info.Name, len(info.Params), y)
	// Output: sphere: 3 parameters, f = 0.5
}

// One binary can serve many objectives; the host lists the names.
func ExampleServeObjectives() {
	// func main() {
	// 	sdk.ServeObjectives(map[string]sdk.Objective{
	// 		"mybench/sphere": sphere{},
	// 		"mybench/other":  other{},
	// 	})
	// }

	// Output:
}

// A suggester proposes whole batches from the history, like a Katib
// suggestion service.
type gridSuggester struct{}

func (gridSuggester) Suggest(_ context.Context, req sdk.SuggestRequest) ([][]float64, error) {
	out := make([][]float64, req.Count)
	for i := range out {
		x := make([]float64, len(req.Objective.Params))
		for j, p := range req.Objective.Params {
			x[j] = p.Low + (p.High-p.Low)*float64(i+len(req.History)+1)/float64(req.Count+len(req.History)+1)
		}
		out[i] = x
	}
	return out, nil
}

// A suggester's main is func main() { sdk.ServeSuggester(gridSuggester{}) };
// the host asks it for each batch, as here.
func ExampleServeSuggester() {
	var sug sdk.Suggester = gridSuggester{}
	batch, _ := sug.Suggest(context.Background(), sdk.SuggestRequest{
		Objective: sdk.Info{Params: []sdk.Param{{Name: "x", Kind: sdk.Float, Low: 0, High: 1}}},
		Count:     3,
	})
	fmt.Println(batch)
	// Output: [[0.25] [0.5] [0.75]]
}
