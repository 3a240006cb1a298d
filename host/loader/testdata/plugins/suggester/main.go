// Command suggester proposes, for each requested point, the midpoint of the
// space shifted by the number of observations (a deterministic suggester
// the tests can check).
package main

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

type mid struct{}

func (mid) Suggest(_ context.Context, req sdk.SuggestRequest) ([][]float64, error) {
	out := make([][]float64, req.Count)
	for i := range out {
		x := make([]float64, len(req.Objective.Params))
		for j, p := range req.Objective.Params {
			x[j] = p.Low + (p.High-p.Low)*float64(i+1)/float64(req.Count+1)
		}
		out[i] = x
	}
	if len(req.History) > 0 && req.Count > 0 {
		out[0] = append([]float64(nil), req.History[0].X...) // re-propose the first observation
	}
	return out, nil
}

func main() { sdk.ServeSuggester(mid{}) }
