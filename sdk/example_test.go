package sdk_test

import (
	"context"
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

// A plugin's main serves its objective and nothing else.
func ExampleServeObjective() {
	// func main() { sdk.ServeObjective(sphere{}) }
	var _ sdk.Objective = sphere{}
}

// One binary can serve many objectives; the host lists the names.
func ExampleServeObjectives() {
	// func main() {
	// 	sdk.ServeObjectives(map[string]sdk.Objective{
	// 		"mybench/sphere": sphere{},
	// 		"mybench/other":  other{},
	// 	})
	// }
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

func ExampleServeSuggester() {
	// func main() { sdk.ServeSuggester(gridSuggester{}) }
	var _ sdk.Suggester = gridSuggester{}
}
