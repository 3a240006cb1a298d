package serve

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/host"
)

// The importance of a parameter is estimated from impLevels values of it,
// each averaged over up to impBase points of the cube: 16·64 predictions of
// the mean per parameter, fewer (down to impMinBase) where n·d² is large so
// that the estimate costs about impWork kernel coordinates — well under the
// 1-D slices' variances (n² each) at ModelMaxEvaluations.
const (
	impLevels  = 16
	impBase    = 64
	impMinBase = 8
	impWork    = 5e7
)

// importance estimates each parameter's first-order share of the variance
// of the posterior mean m over the cube (a functional-ANOVA main effect,
// as fANOVA reports, here of the GP's mean rather than of a random
// forest): for parameter j, m_j(v) is m averaged over up to impBase
// uniform points (a fixed seed) with coordinate j set to v; its variance over
// impLevels values v, divided by the sum of these variances over the
// parameters. Interactions are left out, so the shares sum to 1 by
// construction, not because the main effects explain everything.
func importance(p *host.StoredPosterior) []float64 {
	params := p.Space.Params()
	d := len(params)
	rng := rand.New(rand.NewPCG(uint64(p.Iteration), 0x1a9)) // a fixed seed: no flicker
	nb := int(min(impBase, max(impMinBase, impWork/float64(p.GP.N()*d*d*impLevels))))
	base := make([][]float64, nb)
	for i := range base {
		base[i] = make([]float64, d)
		for k := range base[i] {
			base[i][k] = rng.Float64()
		}
		base[i] = p.Space.Snap(base[i])
	}
	effects := make([][]float64, d)
	for j := range d {
		lv := levels(params[j], impLevels)
		X := mat.NewDense(len(lv)*nb, d, nil)
		for a, l := range lv {
			for i, b := range base {
				row := X.RawRowView(a*nb + i)
				copy(row, b)
				row[j] = l
			}
		}
		mean := make([]float64, len(lv)*nb)
		p.Predict(X, mean, nil)
		effects[j] = make([]float64, len(lv))
		for a := range lv {
			for i := range nb {
				effects[j][a] += p.Native(mean[a*nb+i]) / float64(nb)
			}
		}
	}
	// The shares do not depend on the unit: the effects are divided by
	// their largest magnitude so that outputs of order 1e300 do not
	// overflow the variances (Inf / Inf would be NaN).
	var big float64
	for _, e := range effects {
		for _, v := range e {
			big = math.Max(big, math.Abs(v))
		}
	}
	vars := make([]float64, d)
	total := 0.0
	for j, e := range effects {
		if big > 0 {
			for a := range e {
				e[a] /= big
			}
		}
		vars[j] = variance(e)
		total += vars[j]
	}
	for j := range vars {
		if total > 0 {
			vars[j] /= total
		}
	}
	return vars
}

func variance(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return s / float64(len(v))
}
