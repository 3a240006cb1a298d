package nn

// sgd is stochastic gradient descent with heavy-ball momentum, an L2 penalty
// and inverse-time learning-rate decay, in PyTorch's form:
//
//	η_t = LR / (1 + Decay·t)              (t = 0, 1, … counts updates)
//	g   = G + L2·w                        (L2 only on weights marked Decay)
//	v   ← Momentum·v + g
//	w   ← w − η_t·v
//
// (Keras's v ← μv − η_t g; w ← w + v is the same when η_t is constant.)
// The L2 term is the gradient addL2Grad adds, applied inline (see there).
type sgd[T float] struct {
	LR, Decay, Momentum, L2 float64

	step int
	vel  [][]T
}

// rate returns η_t for the next update.
func (s *sgd[T]) rate() float64 { return s.LR / (1 + s.Decay*float64(s.step)) }

// steps returns the number of updates made.
func (s *sgd[T]) steps() int { return s.step }

// Update applies one step to params using their accumulated gradients G
// (the caller zeroes them before the next mini-batch). The parameter list
// must be the same on every call.
func (s *sgd[T]) Update(params []*Param[T]) {
	if s.vel == nil {
		s.vel = make([][]T, len(params))
		for i, p := range params {
			s.vel[i] = make([]T, len(p.W))
		}
	}
	eta, mu := T(s.rate()), T(s.Momentum)
	for i, p := range params {
		l2 := T(0)
		if p.Decay {
			l2 = T(s.L2)
		}
		v := s.vel[i]
		parallelFor(len(p.W), 1<<15, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				v[j] = mu*v[j] + p.G[j] + l2*p.W[j]
				p.W[j] -= eta * v[j]
			}
		})
	}
	s.step++
}
