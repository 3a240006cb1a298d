package loader

import (
	"math"

	"github.com/tesbo/tesbo/sdk"
)

// fakePost is a posterior with closed-form answers: μ(x) = Σ_j x_j,
// σ²(x) = 0.25, cov(x, x') = 0.1 for distinct points.
type fakePost struct {
	dim   int
	obs   []sdk.Observation
	noise float64
	inc   float64
	cats  []int // sdk.Categorized
}

func (f fakePost) Dim() int { return f.dim }
func (f fakePost) MeanVar(x []float64) (float64, float64) {
	s := 0.0
	for _, v := range x {
		s += v
	}
	return s, 0.25
}
func (f fakePost) MeanCov(pts [][]float64) ([]float64, [][]float64) {
	mean := make([]float64, len(pts))
	cov := make([][]float64, len(pts))
	for i, x := range pts {
		mean[i], _ = f.MeanVar(x)
		cov[i] = make([]float64, len(pts))
		for j := range cov[i] {
			cov[i][j] = 0.1
		}
		cov[i][i] = 0.25
	}
	return mean, cov
}
func (f fakePost) Observations() []sdk.Observation { return f.obs }
func (f fakePost) NoiseVar() float64               { return f.noise }
func (f fakePost) Incumbent() float64              { return f.inc }
func (f fakePost) Categories() []int               { return f.cats }

// wantUCB is the score of testdata's acquisition plugin and script (the
// script adds Dim as well); both add the choice counts of sdk.Categories,
// which a plugin reads through the host's summary.
func wantUCB(p fakePost, batch [][]float64) float64 {
	s := 0.0
	for _, x := range batch {
		m, v := p.MeanVar(x)
		s += m + 2*math.Sqrt(v)
	}
	for _, n := range p.cats {
		s += float64(n)
	}
	return s + p.inc*float64(len(p.obs)) + p.noise
}

var testPost = fakePost{
	dim:   2,
	obs:   []sdk.Observation{{X: []float64{0.1, 0.2}, Value: 1}, {X: []float64{0.5, 0.5}, Value: 2}},
	noise: 0.01,
	inc:   2,
	cats:  []int{0, 3},
}
