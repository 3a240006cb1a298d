package acq

import (
	"context"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// adam runs s.AdamIters projected Adam ascent steps on α from x (overwritten
// with the final iterate). Adam (Kingma & Ba 2015) with β₁ = 0.9, β₂ = 0.999,
// ε = 1e-8 and step s.AdamStep; after each step the iterate is projected onto
// [0,1]^n. A Stochastic Func supplies a fresh Monte-Carlo gradient from rng at
// every step; otherwise the deterministic gradient (analytic or finite
// differences) is used.
func adam(ctx context.Context, p *problem, x []float64, s OptimizeSettings, rng *rand.Rand) {
	const (
		b1  = 0.9
		b2  = 0.999
		eps = 1e-8
	)
	n := len(x)
	clipUnit(x)
	g := make([]float64, n)
	m1 := make([]float64, n)
	m2 := make([]float64, n)
	sf, stochastic := p.f.(Stochastic)
	for it := 1; it <= s.AdamIters; it++ {
		if ctx.Err() != nil {
			return
		}
		var v float64
		if stochastic && p.hasGrad {
			for i := range g {
				g[i] = 0
			}
			v = sf.EvalSample(mat.NewDense(p.q, p.d, x), mat.NewDense(p.q, p.d, g), rng)
			for i := range g {
				g[i] = -g[i]
			}
			p.maskGrad(g)
			v = -v
		} else {
			v = p.valueGrad(x, g)
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return
		}
		c1 := 1 - math.Pow(b1, float64(it))
		c2 := 1 - math.Pow(b2, float64(it))
		for i := range x {
			gi := g[i]
			if math.IsNaN(gi) || math.IsInf(gi, 0) {
				gi = 0
			}
			m1[i] = b1*m1[i] + (1-b1)*gi
			m2[i] = b2*m2[i] + (1-b2)*gi*gi
			x[i] -= s.AdamStep * (m1[i] / c1) / (math.Sqrt(m2[i]/c2) + eps)
		}
		clipUnit(x)
	}
}
