package tes

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// sure reports whether TES has nothing to learn for a single-point query:
// every trusted maximizer is one point, so α ≡ 0 (the posterior is sure
// of x*) and any query is as good to TES as any other. Not with points in
// flight (worker mode), whose queries keep TES's choice.
func (s deliverSettings) sure(f *Func, st *acq.State, rest int) bool {
	if s.NoSureExplore {
		return false
	}
	k, _ := f.m.XStar.Dims()
	return rest == 1 && k == 1 && st.Pending == nil
}

// maxVariance returns the point of the unit cube where the posterior
// variance is largest (1×d): when the model is sure of x*, the evaluation
// goes where the model is least sure of f, the one kind of observation
// that can show the model wrong (a mode it has not seen). Its value is
// poor by the model's own account, so it does not compete with the
// evaluations near x̄ for the user's best trial.
func maxVariance(ctx context.Context, st *acq.State) (*mat.Dense, error) {
	x, _, err := acq.MaximizeMixed(ctx, logVariance{st.GP}, 1, st.GP.Dim(), acq.CategoriesOf(st.GP), st.Pin(acq.OptimizeSettings{}), st.Rand)
	if err != nil {
		return nil, fmt.Errorf("tes: maximize the posterior variance: %w", err)
	}
	return x, nil
}

// logVariance is log σ²(x) for one point, with its gradient.
type logVariance struct{ g *gp.GP }

func (l logVariance) Eval(X, grad *mat.Dense) float64 {
	x := X.RawRowView(0)
	var dv []float64
	if grad != nil {
		dv = make([]float64, len(x))
	}
	_, v := l.g.MeanVarGrad(x, nil, dv)
	if !(v > 0) {
		return math.Inf(-1)
	}
	if grad != nil {
		for j, d := range dv {
			grad.Set(0, j, d/v)
		}
	}
	return math.Log(v)
}

func (logVariance) HasGradient() bool { return true }
