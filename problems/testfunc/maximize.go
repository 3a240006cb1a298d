package testfunc

import (
	"math"
	"sort"
)

// refine climbs from x0 to a local maximum of f on the box [lo, hi] by
// projected gradient ascent with Barzilai–Borwein steps and an Armijo
// backtracking test on the projected step. grad writes ∇f(x) into its second
// argument and returns f(x). It returns the point and its value; it never
// leaves the box and never returns a worse point than x0 (clamped).
func refine(grad func(x, dst []float64) float64, x0, lo, hi []float64) ([]float64, float64) {
	d := len(x0)
	x := make([]float64, d)
	for j := range x {
		x[j] = math.Min(math.Max(x0[j], lo[j]), hi[j])
	}
	g := make([]float64, d)
	fx := grad(x, g)
	y := make([]float64, d)
	gy := make([]float64, d)
	// The first step moves at most 1% of the box diagonal.
	var diag float64
	for j := range lo {
		diag += (hi[j] - lo[j]) * (hi[j] - lo[j])
	}
	t := 0.01 * math.Sqrt(diag) / (norm(g) + 1e-300)
	for iter := 0; iter < 10000; iter++ {
		var fy, dec float64
		accepted := false
		for back := 0; back < 60; back++ {
			dec = 0
			for j := range y {
				y[j] = math.Min(math.Max(x[j]+t*g[j], lo[j]), hi[j])
				dec += g[j] * (y[j] - x[j])
			}
			if dec <= 0 {
				break // projected gradient is zero: a KKT point
			}
			fy = grad(y, gy)
			if fy >= fx+1e-4*dec {
				accepted = true
				break
			}
			t /= 2
		}
		if !accepted {
			break
		}
		// Barzilai–Borwein step for ascent: t = sᵀs / −sᵀ(∇f(y) − ∇f(x)).
		var ss, sy, step float64
		for j := range y {
			s := y[j] - x[j]
			ss += s * s
			sy -= s * (gy[j] - g[j])
			step = math.Max(step, math.Abs(s)/(hi[j]-lo[j]))
		}
		improved := fy - fx
		copy(x, y)
		copy(g, gy)
		fx = fy
		if step < 1e-15 || improved <= 1e-16*math.Abs(fx) && step < 1e-9 {
			break
		}
		if sy > 0 {
			t = ss / sy
		} else {
			t *= 4
		}
	}
	return x, fx
}

func norm(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// gridPeak is a point of a 2-d evaluation grid with its value.
type gridPeak struct {
	x     [2]float64
	value float64
}

// gridPeaks returns the local maxima of a 2-d grid of values v[a][b] at
// (xs[a], ys[b]) (points not below any of their up to 8 neighbours), best
// first, at most max of them.
func gridPeaks(v [][]float64, xs, ys []float64, max int) []gridPeak {
	var peaks []gridPeak
	na, nb := len(xs), len(ys)
	for a := 0; a < na; a++ {
		for b := 0; b < nb; b++ {
			c := v[a][b]
			peak := true
			for da := -1; da <= 1 && peak; da++ {
				for db := -1; db <= 1; db++ {
					i, j := a+da, b+db
					if (da == 0 && db == 0) || i < 0 || j < 0 || i >= na || j >= nb {
						continue
					}
					if v[i][j] > c {
						peak = false
						break
					}
				}
			}
			if peak {
				peaks = append(peaks, gridPeak{x: [2]float64{xs[a], ys[b]}, value: c})
			}
		}
	}
	sort.Slice(peaks, func(i, j int) bool { return peaks[i].value > peaks[j].value })
	if len(peaks) > max {
		peaks = peaks[:max]
	}
	return peaks
}

// linspace returns n ≥ 2 equally spaced points from lo to hi inclusive.
func linspace(lo, hi float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = lo + (hi-lo)*float64(i)/float64(n-1)
	}
	s[n-1] = hi
	return s
}
