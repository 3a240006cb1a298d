package curves

import (
	"math"

	"gonum.org/v1/gonum/optimize"
)

// splitmix64 is one step of the SplitMix64 generator (Steele, Lea and
// Flood 2014), used here as a hash.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// gauss is a standard normal number that is a fixed function of (seed, x,
// k): Box–Muller on two uniforms hashed from them.
func gauss(seed uint64, x []float64, k int) float64 {
	h := splitmix64(seed)
	for _, v := range x {
		h = splitmix64(h ^ math.Float64bits(v))
	}
	h = splitmix64(h ^ uint64(k))
	u1 := (float64(h>>11) + 0.5) / (1 << 53)
	u2 := float64(splitmix64(h)>>11) / (1 << 53)
	return math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
}

// maximize finds max f over [0, 1]^d: the best points of a grid, each
// refined by Nelder–Mead (coordinates clamped into the cube).
func maximize(d int, f func([]float64) float64) (float64, []float64) {
	n := 101
	if d > 2 {
		n = 31
	}
	type cand struct {
		v float64
		x []float64
	}
	var top []cand
	idx := make([]int, d)
	for {
		x := make([]float64, d)
		for i := range x {
			x[i] = float64(idx[i]) / float64(n-1)
		}
		c := cand{f(x), x}
		top = append(top, c)
		for i := len(top) - 1; i > 0 && top[i].v > top[i-1].v; i-- {
			top[i], top[i-1] = top[i-1], top[i]
		}
		if len(top) > 8 {
			top = top[:8]
		}
		i := 0
		for ; i < d; i++ {
			if idx[i]++; idx[i] < n {
				break
			}
			idx[i] = 0
		}
		if i == d {
			break
		}
	}
	clamp := func(x []float64) []float64 {
		y := make([]float64, len(x))
		for i, v := range x {
			y[i] = min(max(v, 0), 1)
		}
		return y
	}
	best := top[0]
	for _, c := range top {
		p := optimize.Problem{Func: func(x []float64) float64 { return -f(clamp(x)) }}
		res, err := optimize.Minimize(p, c.x, &optimize.Settings{FuncEvaluations: 4000}, &optimize.NelderMead{})
		if err != nil && res == nil {
			continue
		}
		if x := clamp(res.X); f(x) > best.v {
			best = cand{f(x), x}
		}
	}
	return best.v, best.x
}
