package nn

import (
	"math"
	"testing"
)

// Two Adam steps against the update written out by hand: bias-corrected
// moments of g = G + λw (λ on weights only), η_t = LR/(1 + Decay·t), for
// the default β₁ and two others (0 keeps no first moment).
func TestAdamUpdate(t *testing.T) {
	for _, b1 := range []float64{0.9, 0.6, 0} {
		testAdamUpdate(t, b1)
	}
}

func testAdamUpdate(t *testing.T, b1 float64) {
	w := &Param[float64]{W: []float64{1, -2}, G: []float64{0.5, -0.25}, Decay: true}
	b := &Param[float64]{W: []float64{3}, G: []float64{1}}
	a := &adam[float64]{LR: 0.1, Decay: 0.5, L2: 0.01, Beta1: b1}
	params := []*Param[float64]{w, b}
	type state struct{ m, v float64 }
	st := map[*float64]*state{}
	ref := func(p *Param[float64], step int) []float64 {
		out := make([]float64, len(p.W))
		for j := range p.W {
			s := st[&p.W[j]]
			if s == nil {
				s = &state{}
				st[&p.W[j]] = s
			}
			g := p.G[j]
			if p.Decay {
				g += 0.01 * p.W[j]
			}
			s.m = b1*s.m + (1-b1)*g
			s.v = 0.999*s.v + 0.001*g*g
			tt := float64(step + 1)
			mh, vh := s.m/(1-math.Pow(b1, tt)), s.v/(1-math.Pow(0.999, tt))
			out[j] = p.W[j] - 0.1/(1+0.5*float64(step))*mh/(math.Sqrt(vh)+1e-8)
		}
		return out
	}
	for step := range 2 {
		wantW, wantB := ref(w, step), ref(b, step)
		a.Update(params)
		for j := range wantW {
			if math.Abs(w.W[j]-wantW[j]) > 1e-14 {
				t.Fatalf("β₁ %v, step %d: w[%d] = %v, want %v", b1, step, j, w.W[j], wantW[j])
			}
		}
		if math.Abs(b.W[0]-wantB[0]) > 1e-14 {
			t.Fatalf("β₁ %v, step %d: b = %v, want %v", b1, step, b.W[0], wantB[0])
		}
	}
	if a.steps() != 2 || math.Abs(a.rate()-0.05) > 1e-15 {
		t.Fatalf("steps %d rate %v", a.steps(), a.rate())
	}
}

// TrainSettings' decay rates: zero takes the default, a negative value
// means none, and 1 or more is refused before any update.
func TestDecayRateSettings(t *testing.T) {
	d := TrainSettings{}.withDefaults()
	if d.Momentum != 0.9 || d.Beta1 != 0.9 {
		t.Errorf("defaults: momentum %v, beta1 %v, want 0.9 and 0.9", d.Momentum, d.Beta1)
	}
	n := TrainSettings{Momentum: -1, Beta1: -1}.withDefaults()
	if n.Momentum != 0 || n.Beta1 != 0 {
		t.Errorf("negative: momentum %v, beta1 %v, want 0 and 0", n.Momentum, n.Beta1)
	}
	u, err := newUpdater[float32](TrainSettings{Optimizer: AdamOptimizer, Beta1: 0.7}.withDefaults())
	if a, ok := u.(*adam[float32]); err != nil || !ok || a.Beta1 != 0.7 {
		t.Errorf("Adam with beta1 0.7: %#v, %v", u, err)
	}
	for _, s := range []TrainSettings{{Momentum: 1}, {Momentum: math.NaN()}, {Optimizer: AdamOptimizer, Beta1: 1.5}} {
		if _, err := newUpdater[float32](s.withDefaults()); err == nil {
			t.Errorf("%+v: want an error", s)
		}
	}
}
