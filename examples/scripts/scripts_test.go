package scripts

import (
	"context"
	"math"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// The scripts are interpreted by the host's Yaegi loader (host/loader
// tests run them there); these tests run them compiled, checking the
// values their doc comments promise.

func TestHartmann6Optimum(t *testing.T) {
	info := Info()
	if len(info.Params) != 6 || info.Optimum == nil || !info.Minimize {
		t.Fatalf("Info = %+v, want 6 parameters, minimized, with an optimum", info)
	}
	xStar := []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}
	f, err := Evaluate(context.Background(), xStar)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(f-*info.Optimum) > 1e-5 {
		t.Errorf("f(x*) = %v, want the declared optimum %v", f, *info.Optimum)
	}
	far, _ := Evaluate(context.Background(), make([]float64, 6))
	if far <= f {
		t.Errorf("f(0) = %v is not above f(x*) = %v", far, f)
	}
}

// rbfPosterior is a zero-mean posterior with covariance exp(−|x−y|²).
type rbfPosterior struct{ noise float64 }

func (rbfPosterior) Dim() int                               { return 1 }
func (rbfPosterior) MeanVar(x []float64) (float64, float64) { return 0, 1 }
func (rbfPosterior) Observations() []sdk.Observation        { return nil }
func (p rbfPosterior) NoiseVar() float64                    { return p.noise }
func (rbfPosterior) Incumbent() float64                     { return 0 }
func (rbfPosterior) MeanCov(pts [][]float64) ([]float64, [][]float64) {
	cov := make([][]float64, len(pts))
	for i := range pts {
		cov[i] = make([]float64, len(pts))
		for j := range pts {
			d := pts[i][0] - pts[j][0]
			cov[i][j] = math.Exp(-d * d)
		}
	}
	return make([]float64, len(pts)), cov
}

func TestUCBLogDetScore(t *testing.T) {
	post := rbfPosterior{noise: 0.01}
	// One point: κ·½·log(1 + σ²/σ_n²).
	if got, want := Score(post, [][]float64{{0.5}}), kappa*0.5*math.Log(1+1/0.01); math.Abs(got-want) > 1e-12 {
		t.Errorf("Score of one point = %v, want %v", got, want)
	}
	// A duplicate adds almost no information; distant points add a lot.
	dup := Score(post, [][]float64{{0.5}, {0.5}})
	apart := Score(post, [][]float64{{0}, {10}})
	if !(apart > dup) {
		t.Errorf("Score(apart) = %v, Score(duplicate) = %v: the duplicate should score lower", apart, dup)
	}
}
