package loader

import (
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/sdk"
)

// GPModel is the part of package gp's *GP that PosteriorFromGP needs (the
// methods fixed in CONTRACTS.md); *gp.GP satisfies it as it is, so neither
// sdk nor this package imports gp.
type GPModel interface {
	Dim() int
	NoiseVar() float64
	X() *mat.Dense
	Y() []float64
	MeanVar(x []float64) (mean, variance float64)
	Joint(X *mat.Dense) (mean []float64, cov *mat.SymDense)
}

// PosteriorFromGP adapts a fitted GP (inputs in [0,1]^d, standardized
// outputs) and the incumbent (best standardized observed value) to the
// sdk.Posterior view acquisition scripts see.
func PosteriorFromGP(g GPModel, incumbent float64) sdk.Posterior {
	return gpPosterior{g: g, inc: incumbent}
}

type gpPosterior struct {
	g   GPModel
	inc float64
}

func (p gpPosterior) Dim() int                               { return p.g.Dim() }
func (p gpPosterior) NoiseVar() float64                      { return p.g.NoiseVar() }
func (p gpPosterior) Incumbent() float64                     { return p.inc }
func (p gpPosterior) MeanVar(x []float64) (float64, float64) { return p.g.MeanVar(x) }

func (p gpPosterior) MeanCov(points [][]float64) ([]float64, [][]float64) {
	n := len(points)
	if n == 0 {
		return nil, nil
	}
	X := mat.NewDense(n, p.g.Dim(), nil)
	for i, x := range points {
		X.SetRow(i, x)
	}
	mean, cov := p.g.Joint(X)
	out := make([][]float64, n)
	for i := range out {
		out[i] = make([]float64, n)
		for j := range out[i] {
			out[i][j] = cov.At(i, j)
		}
	}
	return mean, out
}

func (p gpPosterior) Observations() []sdk.Observation {
	X, y := p.g.X(), p.g.Y()
	out := make([]sdk.Observation, len(y))
	for i := range out {
		out[i] = sdk.Observation{X: mat.Row(nil, i, X), Value: y[i]}
	}
	return out
}
