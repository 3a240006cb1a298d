package loader

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// linGP is a stand-in for *gp.GP: a Bayesian linear model f(x) = wᵀx with
// w ~ N(0, I) and no data, so mean 0 and covariance k(x, x') = xᵀx'.
type linGP struct{ X_ *mat.Dense }

func (g linGP) Dim() int          { return 2 }
func (g linGP) NoiseVar() float64 { return 0.5 }
func (g linGP) X() *mat.Dense     { return g.X_ }
func (g linGP) Y() []float64      { return []float64{1.5} }
func (g linGP) MeanVar(x []float64) (float64, float64) {
	return 0, x[0]*x[0] + x[1]*x[1]
}
func (g linGP) Joint(X *mat.Dense) ([]float64, *mat.SymDense) {
	n, _ := X.Dims()
	cov := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			cov.SetSym(i, j, mat.Dot(X.RowView(i), X.RowView(j)))
		}
	}
	return make([]float64, n), cov
}

func TestPosteriorFromGP(t *testing.T) {
	p := PosteriorFromGP(linGP{mat.NewDense(1, 2, []float64{0.1, 0.2})}, 1.5)
	if p.Dim() != 2 || p.NoiseVar() != 0.5 || p.Incumbent() != 1.5 {
		t.Fatal("scalars")
	}
	obs := p.Observations()
	if len(obs) != 1 || obs[0].X[1] != 0.2 || obs[0].Value != 1.5 {
		t.Fatalf("observations %v", obs)
	}
	pts := [][]float64{{1, 0}, {0.5, 0.5}, {0, 2}}
	mean, cov := p.MeanCov(pts)
	for i := range pts {
		if mean[i] != 0 {
			t.Fatal("mean")
		}
		for j := range pts {
			want := pts[i][0]*pts[j][0] + pts[i][1]*pts[j][1]
			if math.Abs(cov[i][j]-want) > 1e-15 {
				t.Fatalf("cov[%d][%d] = %v, want %v", i, j, cov[i][j], want)
			}
		}
	}
	if _, v := p.MeanVar(pts[2]); v != 4 {
		t.Fatalf("variance %v", v)
	}
}
