package nn

import (
	"math"
	"testing"
)

// Two Adam steps against the update written out by hand: bias-corrected
// moments of g = G + λw (λ on weights only), η_t = LR/(1 + Decay·t).
func TestAdamUpdate(t *testing.T) {
	w := &Param[float64]{W: []float64{1, -2}, G: []float64{0.5, -0.25}, Decay: true}
	b := &Param[float64]{W: []float64{3}, G: []float64{1}}
	a := &adam[float64]{LR: 0.1, Decay: 0.5, L2: 0.01}
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
			s.m = 0.9*s.m + 0.1*g
			s.v = 0.999*s.v + 0.001*g*g
			tt := float64(step + 1)
			mh, vh := s.m/(1-math.Pow(0.9, tt)), s.v/(1-math.Pow(0.999, tt))
			out[j] = p.W[j] - 0.1/(1+0.5*float64(step))*mh/(math.Sqrt(vh)+1e-8)
		}
		return out
	}
	for step := range 2 {
		wantW, wantB := ref(w, step), ref(b, step)
		a.Update(params)
		for j := range wantW {
			if math.Abs(w.W[j]-wantW[j]) > 1e-14 {
				t.Fatalf("step %d: w[%d] = %v, want %v", step, j, w.W[j], wantW[j])
			}
		}
		if math.Abs(b.W[0]-wantB[0]) > 1e-14 {
			t.Fatalf("step %d: b = %v, want %v", step, b.W[0], wantB[0])
		}
	}
	if a.steps() != 2 || math.Abs(a.rate()-0.05) > 1e-15 {
		t.Fatalf("steps %d rate %v", a.steps(), a.rate())
	}
}
