package testfunc

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/pareto"
)

// maximized returns the objectives of y negated (pareto maximizes) and the
// reference point likewise.
func maximized(p *Multi, ys [][]float64) ([][]float64, []float64) {
	m := p.Objectives()
	out := make([][]float64, len(ys))
	for i, y := range ys {
		out[i] = make([]float64, m)
		for j := range out[i] {
			out[i][j] = -y[j]
		}
	}
	ref := make([]float64, m)
	for j := range ref {
		ref[j] = -p.RefPoint[j]
	}
	return out, ref
}

func mustMulti(t *testing.T, name string, s MultiSettings) *Multi {
	t.Helper()
	p, err := NewMulti(name, s)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func evalUnit(t *testing.T, p *Multi, u []float64) []float64 {
	t.Helper()
	y, err := p.EvalUnit(u)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

// frontHV is the hypervolume of the given outputs' Pareto front.
func frontHV(p *Multi, ys [][]float64) float64 {
	Y, ref := maximized(p, ys)
	return pareto.Hypervolume(Y, ref)
}

func TestMultiRegistry(t *testing.T) {
	for _, name := range MultiNames() {
		p := mustMulti(t, name, MultiSettings{})
		u := make([]float64, p.Dim)
		for i := range u {
			u[i] = 0.37
		}
		y := evalUnit(t, p, u)
		if len(y) != len(p.Outputs) {
			t.Errorf("%s: %d outputs, declared %d", name, len(y), len(p.Outputs))
		}
		for _, v := range y {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Errorf("%s: output %v at %v", name, y, u)
			}
		}
		if (p.RefPoint != nil) != (p.Objectives() > 1) {
			t.Errorf("%s: reference point %v with %d objectives", name, p.RefPoint, p.Objectives())
		}
	}
	for _, bad := range []MultiSettings{{Dim: 3}, {Objectives: 3}} {
		if _, err := NewMulti("branincurrin", bad); err == nil {
			t.Errorf("branincurrin accepted %+v", bad)
		}
	}
	if _, err := NewMulti("dtlz2", MultiSettings{Dim: 3, Objectives: 3}); err == nil {
		t.Error("dtlz2 accepted 3 inputs for 3 objectives")
	}
}

// TestDTLZ2Front checks that the front (last coordinates 0.5) lies on the
// unit sphere and that a dense sample of it reaches the stated maximum
// hypervolume from below.
func TestDTLZ2Front(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, m := range []int{2, 3, 4} {
		p := mustMulti(t, "dtlz2", MultiSettings{Dim: m + 3, Objectives: m})
		for k := 0; k < 20; k++ {
			u := make([]float64, p.Dim)
			for i := range u {
				u[i] = 0.5
				if i < m-1 {
					u[i] = rng.Float64()
				}
			}
			s := 0.0
			for _, v := range evalUnit(t, p, u) {
				s += v * v
			}
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("M=%d: Σf² = %v on the front, want 1", m, s)
			}
		}
	}
	// Tolerances: the sampled front misses about 3e-4 (M = 2) and 1.2 %
	// (M = 3) of the volume between its points.
	for _, c := range []struct {
		m, n int
		tol  float64
	}{{2, 4000, 1e-3}, {3, 70, 2e-2}} {
		p := mustMulti(t, "dtlz2", MultiSettings{Dim: 6, Objectives: c.m})
		var ys [][]float64
		grid(c.m-1, c.n, func(g []float64) {
			u := []float64{0.5, 0.5, 0.5, 0.5, 0.5, 0.5}
			copy(u, g)
			ys = append(ys, evalUnit(t, p, u))
		})
		hv := frontHV(p, ys)
		if hv > p.MaxHV+1e-12 || hv < p.MaxHV*(1-c.tol) {
			t.Errorf("M=%d: hypervolume of %d front points %v, stated maximum %v", c.m, len(ys), hv, p.MaxHV)
		}
	}
}

// grid calls f with every point of the regular grid {0, 1/(n−1), …, 1}^k.
func grid(k, n int, f func([]float64)) {
	g := make([]float64, k)
	var rec func(i int)
	rec = func(i int) {
		if i == k {
			f(g)
			return
		}
		for j := 0; j < n; j++ {
			g[i] = float64(j) / float64(n-1)
			rec(i + 1)
		}
	}
	rec(0)
}

// TestZDTMaxHV checks ZDT1–3's stated maximum hypervolumes against a dense
// sample of their fronts (x₂ … x_d = 0).
func TestZDTMaxHV(t *testing.T) {
	for _, name := range []string{"zdt1", "zdt2", "zdt3"} {
		p := mustMulti(t, name, MultiSettings{Dim: 3})
		var ys [][]float64
		const n = 4001
		for i := 0; i < n; i++ {
			ys = append(ys, evalUnit(t, p, []float64{float64(i) / (n - 1), 0, 0}))
		}
		if hv := frontHV(p, ys); hv > p.MaxHV+1e-9 || hv < p.MaxHV-1e-3 {
			t.Errorf("%s: hypervolume of the sampled front %v, stated maximum %v", name, hv, p.MaxHV)
		}
	}
}

// TestEstimatedMaxHV checks BraninCurrin's and VehicleSafety's stated
// maximum hypervolumes (estimates from approximate fronts) against dense
// samples: close below them, never far above.
func TestEstimatedMaxHV(t *testing.T) {
	p := mustMulti(t, "branincurrin", MultiSettings{})
	var ys [][]float64
	grid(2, 1001, func(u []float64) { ys = append(ys, evalUnit(t, p, u)) })
	// The grid's front converges slowly (56.45, 58.50, 59.15 for 101, 301,
	// 1001 points a side).
	if hv := frontHV(p, ys); math.Abs(hv-p.MaxHV) > 5e-3*p.MaxHV {
		t.Errorf("branincurrin: grid front hypervolume %v, stated maximum %v", hv, p.MaxHV)
	}
	p = mustMulti(t, "vehiclesafety", MultiSettings{})
	ys = ys[:0]
	grid(5, 9, func(u []float64) { ys = append(ys, evalUnit(t, p, u)) })
	if hv := frontHV(p, ys); hv > p.MaxHV*1.005 || hv < p.MaxHV*0.97 {
		t.Errorf("vehiclesafety: grid front hypervolume %v, stated maximum %v", hv, p.MaxHV)
	}
}

// TestConstrainedOptima checks each stated constrained optimum: the
// minimizer is feasible (to the precision its digits are given in) and
// attains the value, and no feasible point of a random sample beats it.
func TestConstrainedOptima(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, name := range MultiNames() {
		p := mustMulti(t, name, MultiSettings{})
		if p.Objectives() != 1 {
			continue
		}
		dims := []int{p.Dim}
		if strings.HasPrefix(name, "constrainedhartmann") {
			dims = []int{3, 6}
		}
		for _, d := range dims {
			p := mustMulti(t, name, MultiSettings{Dim: d})
			if math.IsNaN(p.Optimum) {
				continue
			}
			y, err := p.Eval(p.Minimizer)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(y[0]-p.Optimum) > 1e-4*math.Max(1, math.Abs(p.Optimum)) {
				t.Errorf("%s d=%d: value %v at the minimizer, stated optimum %v", name, d, y[0], p.Optimum)
			}
			for i, v := range y[1:] {
				if v < -2e-3 {
					t.Errorf("%s d=%d: slack %d is %v at the minimizer", name, d, i+1, v)
				}
			}
			u := make([]float64, d)
			for k := 0; k < 20000; k++ {
				for i := range u {
					u[i] = rng.Float64()
				}
				y := evalUnit(t, p, u)
				if p.Feasible(y) && y[0] < p.Optimum-1e-4*math.Abs(p.Optimum) {
					t.Fatalf("%s d=%d: feasible %v at %v beats the stated optimum %v", name, d, y[0], u, p.Optimum)
				}
			}
		}
	}
}
