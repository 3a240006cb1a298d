package acqscript

import (
	"math"

	"github.com/tesbo/tesbo/sdk"
)

// Score = Σ_i (μ_i + 2σ_i) + Σ_ij cov_ij·0 + incumbent·n + σ_n² + d + Σ_j
// choices_j.
func Score(p sdk.Posterior, batch [][]float64) float64 {
	s := 0.0
	for _, x := range batch {
		m, v := p.MeanVar(x)
		s += m + 2*math.Sqrt(v)
	}
	mean, cov := p.MeanCov(batch)
	for i := range mean {
		s += 0 * (mean[i] + cov[i][i])
	}
	for _, n := range sdk.Categories(p) {
		s += float64(n)
	}
	return s + p.Incumbent()*float64(len(p.Observations())) + p.NoiseVar() + float64(p.Dim())
}
