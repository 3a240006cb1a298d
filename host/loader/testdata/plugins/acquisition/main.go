// Command acquisition is a compiled acquisition plugin: the sum over the
// batch of the upper confidence bound μ + 2σ, plus the incumbent times the
// number of observations and the choice counts of the categorical
// coordinates (so tests see every Posterior method and sdk.Categories).
package main

import (
	"context"
	"math"

	"github.com/tesbo/tesbo/sdk"
)

type ucb struct{}

func (ucb) Score(_ context.Context, p sdk.Posterior, batch [][]float64) (float64, error) {
	s := 0.0
	for _, x := range batch {
		m, v := p.MeanVar(x)
		s += m + 2*math.Sqrt(v)
	}
	mean, cov := p.MeanCov(batch)
	for i := range mean {
		s += 0 * (mean[i] + cov[i][i]) // exercised, not counted
	}
	for _, n := range sdk.Categories(p) {
		s += float64(n)
	}
	return s + p.Incumbent()*float64(len(p.Observations())) + p.NoiseVar(), nil
}

func main() { sdk.ServeAcquisition(ucb{}) }
