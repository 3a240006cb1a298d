package tes

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// sure reports whether TES has nothing to learn for its one point of a
// query (q = 1, or the point beside x̄ in a batch of 2): every trusted
// maximizer is one point, so α ≡ 0 (the posterior is sure of x*) and any
// query is as good to TES as any other. Not with points in flight (worker
// mode), which the variance's maximizer would ignore.
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
	x, err := acq.MaximizeVariance(ctx, st.GP, st.Pin(acq.OptimizeSettings{}), st.Rand)
	if err != nil {
		return nil, fmt.Errorf("tes: maximize the posterior variance: %w", err)
	}
	return x, nil
}
