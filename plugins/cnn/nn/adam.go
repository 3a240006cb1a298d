package nn

import "math"

// adam is the Adam optimizer (Kingma & Ba 2015) with the same L2 penalty
// and inverse-time learning-rate decay as SGD (PyTorch's Adam with
// weight_decay, i.e. L2 added to the gradient, not AdamW):
//
//	η_t = LR / (1 + Decay·t)              (t = 0, 1, … counts updates)
//	g   = G + L2·w                        (L2 only on weights marked Decay)
//	m   ← β₁·m + (1−β₁)·g,  v ← β₂·v + (1−β₂)·g²
//	w   ← w − η_t · (m/(1−β₁^{t+1})) / (√(v/(1−β₂^{t+1})) + ε)
//
// with β₂ = 0.999, ε = 1e-8 and β₁ = Beta1 (TrainSettings.Beta1, 0.9 unless
// set).
type adam[T float] struct {
	LR, Decay, L2, Beta1 float64

	step int
	m, v [][]T
}

// Adam's default first-moment decay rate, its second-moment rate and its
// denominator offset.
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

// rate returns η_t for the next update.
func (a *adam[T]) rate() float64 { return a.LR / (1 + a.Decay*float64(a.step)) }

// steps returns the number of updates made.
func (a *adam[T]) steps() int { return a.step }

// Update applies one step to params using their accumulated gradients G.
// The parameter list must be the same on every call.
func (a *adam[T]) Update(params []*Param[T]) {
	if a.m == nil {
		a.m, a.v = make([][]T, len(params)), make([][]T, len(params))
		for i, p := range params {
			a.m[i], a.v[i] = make([]T, len(p.W)), make([]T, len(p.W))
		}
	}
	t := float64(a.step + 1)
	c1, c2 := 1-math.Pow(a.Beta1, t), 1-math.Pow(adamBeta2, t)
	eta := T(a.rate() / c1)
	b1, b2, s2, eps := T(a.Beta1), T(adamBeta2), T(1/math.Sqrt(c2)), T(adamEps)
	for i, p := range params {
		l2 := T(0)
		if p.Decay {
			l2 = T(a.L2)
		}
		m, v := a.m[i], a.v[i]
		parallelFor(len(p.W), 1<<15, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				g := p.G[j] + l2*p.W[j]
				m[j] = b1*m[j] + (1-b1)*g
				v[j] = b2*v[j] + (1-b2)*g*g
				p.W[j] -= eta * m[j] / (T(math.Sqrt(float64(v[j])))*s2 + eps)
			}
		})
	}
	a.step++
}
