// Command go-suggester is a complete tesbo suggester plugin: quasi-random
// search. A suggester proposes whole batches itself (the host fits no model
// for it); this one continues the R_d low-discrepancy sequence (M. Roberts,
// 2018) over the unit cube,
//
//	u_n = frac(1/2 + n·α),  α_j = φ_d^−(j+1)  (j = 1..d),
//
// where φ_d is the positive root of x^(d+1) = x + 1 (the golden ratio for
// d = 1), and maps u_n into each parameter's range. n counts the points the
// study already has (History and Pending), so successive batches continue
// the sequence and fill the space evenly: a model-free baseline, and a
// template for suggesters that do use req.History. Put this directory (or
// its binary) into a plugins directory:
//
//	cp -r examples/go-suggester plugins/quasirandom
//	tesbo-host run --objective synthetic/branin --acq quasirandom --iters 10
package main

import (
	"context"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

type quasiRandom struct{}

// Suggest returns req.Count points of the R_d sequence, starting at index
// len(History)+len(Pending). Failed evaluations are in neither, so a batch
// after a failure repeats earlier indices; the host moves any point that
// coincides with an earlier one.
func (quasiRandom) Suggest(_ context.Context, req sdk.SuggestRequest) ([][]float64, error) {
	params := req.Objective.Params
	alpha := sequenceSteps(len(params))
	start := len(req.History) + len(req.Pending)
	out := make([][]float64, req.Count)
	for i := range out {
		n := float64(start + i)
		x := make([]float64, len(params))
		for j, p := range params {
			_, u := math.Modf(0.5 + n*alpha[j])
			x[j] = fromUnit(p, u)
		}
		out[i] = x
	}
	return out, nil
}

// sequenceSteps returns α_j = φ_d^−(j+1) for j = 0..d−1, with φ_d found by
// Newton's method on g(x) = x^(d+1) − x − 1 from x = 2 (g is convex on
// x > 0 and g(2) > 0, so the iterates decrease monotonically to the root).
func sequenceSteps(d int) []float64 {
	phi := 2.0
	for range 100 {
		step := (math.Pow(phi, float64(d+1)) - phi - 1) / (float64(d+1)*math.Pow(phi, float64(d)) - 1)
		phi -= step
		if step < 1e-15 {
			break
		}
	}
	alpha := make([]float64, d)
	for j := range alpha {
		alpha[j] = math.Pow(phi, -float64(j+1))
	}
	return alpha
}

// fromUnit maps u ∈ [0, 1) into p's native range: linearly for Float, in
// log for LogFloat, onto the integers Low..High in equal-width cells for
// Int.
func fromUnit(p sdk.Param, u float64) float64 {
	switch p.Kind {
	case sdk.LogFloat:
		return math.Exp(math.Log(p.Low) + u*(math.Log(p.High)-math.Log(p.Low)))
	case sdk.Int:
		return math.Min(p.High, math.Floor(p.Low+u*(p.High-p.Low+1)))
	}
	return p.Low + u*(p.High-p.Low)
}

func main() { sdk.ServeSuggester(quasiRandom{}) }
