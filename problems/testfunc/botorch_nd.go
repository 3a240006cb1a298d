package testfunc

import (
	"fmt"
	"math"
)

// This file holds BoTorch's synthetic test functions of more than two
// dimensions that the classics lack: Griewank, Rastrigin, Dixon–Price and
// Powell (any dimension), Cosine8 and Shekel. Definitions, bounds and optima
// are BoTorch's (botorch.test_functions.synthetic), written here from the
// formulas; every one is returned in maximization form.

// smooth builds a Function from value(x, dst), which returns f(x) and, when
// dst != nil, writes ∇f(x) into it.
func smooth(name string, lo, hi []float64, optimum float64, maximizers [][]float64, value func(x, dst []float64) float64) *Function {
	return &Function{
		Name:       name,
		Dim:        len(lo),
		Lower:      lo,
		Upper:      hi,
		Optimum:    optimum,
		Maximizers: maximizers,
		NoiseVar:   defaultNoiseVar,
		f:          func(x []float64) float64 { return value(x, nil) },
		grad:       value,
	}
}

// griewank returns the negated Griewank function on [−600, 600]^d (d ≥ 1):
//
//	f(x) = −[Σ x_i²/4000 − Π cos(x_i/√i) + 1],
//
// with f* = 0 at x = 0.
func griewank(d int) (*Function, error) {
	if err := checkDim("griewank", d, 1); err != nil {
		return nil, err
	}
	sq := make([]float64, d) // √i
	for i := range sq {
		sq[i] = math.Sqrt(float64(i + 1))
	}
	value := func(x, dst []float64) float64 {
		var s float64
		prod := 1.0
		for i, v := range x {
			s += v * v / 4000
			prod *= math.Cos(v / sq[i])
		}
		if dst != nil {
			// ∂/∂x_j of Π cos(x_i/√i) is −sin(x_j/√j)/√j · Π_{i≠j} cos(x_i/√i),
			// with the product over i ≠ j from prefix and suffix products
			// (dividing by cos would fail at its zeros).
			pre := 1.0
			for j := range dst {
				dst[j] = pre
				pre *= math.Cos(x[j] / sq[j])
			}
			suf := 1.0
			for j := d - 1; j >= 0; j-- {
				others := dst[j] * suf
				dst[j] = -(x[j]/2000 + math.Sin(x[j]/sq[j])/sq[j]*others)
				suf *= math.Cos(x[j] / sq[j])
			}
		}
		// (1 − Π cos) is ≥ 0 and exactly 0 at x = 0.
		return -(s + (1 - prod))
	}
	return smooth("griewank", box(d, -600), box(d, 600), 0, [][]float64{box(d, 0)}, value), nil
}

// rastrigin returns the negated Rastrigin function on [−5.12, 5.12]^d (d ≥ 1):
//
//	f(x) = −[10d + Σ (x_i² − 10 cos(2πx_i))],
//
// with f* = 0 at x = 0.
func rastrigin(d int) (*Function, error) {
	if err := checkDim("rastrigin", d, 1); err != nil {
		return nil, err
	}
	value := func(x, dst []float64) float64 {
		var g float64
		for i, v := range x {
			s, c := math.Sincos(2 * math.Pi * v)
			// Each term x² + 10(1 − cos 2πx) ≥ 0, exactly 0 at x = 0.
			g += v*v + 10*(1-c)
			if dst != nil {
				dst[i] = -(2*v + 20*math.Pi*s)
			}
		}
		return -g
	}
	return smooth("rastrigin", box(d, -5.12), box(d, 5.12), 0, [][]float64{box(d, 0)}, value), nil
}

// dixonPrice returns the negated Dixon–Price function on [−10, 10]^d (d ≥ 1):
//
//	f(x) = −[(x₁ − 1)² + Σ_{i=2}^d i·(2x_i² − x_{i−1})²],
//
// with f* = 0 at x_i = 2^{−(1 − 2^{1−i})} (x₁ = 1, x₂ = 2^{−1/2}, …).
func dixonPrice(d int) (*Function, error) {
	if err := checkDim("dixonprice", d, 1); err != nil {
		return nil, err
	}
	value := func(x, dst []float64) float64 {
		for i := range dst {
			dst[i] = 0
		}
		g := (x[0] - 1) * (x[0] - 1)
		if dst != nil {
			dst[0] = -2 * (x[0] - 1)
		}
		for i := 1; i < d; i++ {
			w := float64(i + 1)
			t := 2*x[i]*x[i] - x[i-1]
			g += w * t * t
			if dst != nil {
				dst[i] -= w * 2 * t * 4 * x[i]
				dst[i-1] += w * 2 * t
			}
		}
		return -g
	}
	xstar := make([]float64, d)
	for i := range xstar {
		xstar[i] = math.Pow(2, -(1 - math.Pow(2, -float64(i))))
	}
	return smooth("dixonprice", box(d, -10), box(d, 10), 0, [][]float64{xstar}, value), nil
}

// powell returns the negated Powell function on [−4, 5]^d, d a multiple of
// 4: for each block (a, b, c, e) of four consecutive coordinates,
//
//	f(x) = −Σ_blocks [(a + 10b)² + 5(c − e)² + (b − 2c)⁴ + 10(a − e)⁴],
//
// with f* = 0 at x = 0.
func powell(d int) (*Function, error) {
	if err := checkDim("powell", d, 4); err != nil {
		return nil, err
	}
	if d%4 != 0 {
		return nil, fmt.Errorf("powell: dimension %d not supported, want a multiple of 4", d)
	}
	value := func(x, dst []float64) float64 {
		var g float64
		for k := 0; k < d; k += 4 {
			a, b, c, e := x[k], x[k+1], x[k+2], x[k+3]
			p, q, r, s := a+10*b, c-e, b-2*c, a-e
			g += p*p + 5*q*q + r*r*r*r + 10*s*s*s*s
			if dst != nil {
				dst[k] = -(2*p + 40*s*s*s)
				dst[k+1] = -(20*p + 4*r*r*r)
				dst[k+2] = -(10*q - 8*r*r*r)
				dst[k+3] = -(-10*q - 40*s*s*s)
			}
		}
		return -g
	}
	return smooth("powell", box(d, -4), box(d, 5), 0, [][]float64{box(d, 0)}, value), nil
}

// cosine8 returns BoTorch's cosine mixture on [−1, 1]⁸, which BoTorch poses
// as a maximization problem, so it is not negated:
//
//	f(x) = 0.1 Σ cos(5πx_i) − Σ x_i²,
//
// with f* = 0.8 at x = 0 (0.7999999999999999 as eight float64 terms sum).
func cosine8() *Function {
	const d = 8
	value := func(x, dst []float64) float64 {
		var f float64
		for i, v := range x {
			s, c := math.Sincos(5 * math.Pi * v)
			f += 0.1*c - v*v
			if dst != nil {
				dst[i] = -0.5*math.Pi*s - 2*v
			}
		}
		return f
	}
	return smooth("cosine8", box(d, -1), box(d, 1), value(box(d, 0), nil), [][]float64{box(d, 0)}, value)
}

// Shekel (m = 10) centres C (one row per mode) and widths β.
var (
	shekelC = [10][4]float64{
		{4, 4, 4, 4}, {1, 1, 1, 1}, {8, 8, 8, 8}, {6, 6, 6, 6}, {3, 7, 3, 7},
		{2, 9, 2, 9}, {5, 3, 5, 3}, {8, 1, 8, 1}, {6, 2, 6, 2}, {7, 3.6, 7, 3.6},
	}
	shekelBeta = [10]float64{0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5}
)

// shekel returns the negated Shekel function (m = 10) on [0, 10]⁴:
//
//	f(x) = Σ_{i=1}^{10} 1/(Σ_j (x_j − C_ij)² + β_i),
//
// with ten modes; f* = 10.53644315348353 at x* ≈ (4.0007469, 3.9995095,
// 4.0007469, 3.9995095) (computed here by Newton's method from BoTorch's
// published maximizer; BoTorch quotes −10.536443 for its minimum).
func shekel() *Function {
	value := func(x, dst []float64) float64 {
		for j := range dst {
			dst[j] = 0
		}
		var f float64
		for i, c := range shekelC {
			q := shekelBeta[i]
			for j, v := range x {
				q += (v - c[j]) * (v - c[j])
			}
			f += 1 / q
			for j := range dst {
				dst[j] -= 2 * (x[j] - c[j]) / (q * q)
			}
		}
		return f
	}
	xstar := polishStationary(value, []float64{4.000747, 3.99951, 4.000747, 3.99951})
	return smooth("shekel", box(4, 0), box(4, 10), value(xstar, nil), [][]float64{xstar}, value)
}

// polishStationary takes Newton steps on ∇f (Hessian by central differences
// of the analytic gradient) from x0, a point already in a maximum's basin, to
// locate the maximizer to machine precision. Steps that lower f stop it.
func polishStationary(value func(x, dst []float64) float64, x0 []float64) []float64 {
	d := len(x0)
	x := append([]float64(nil), x0...)
	g := make([]float64, d)
	gp := make([]float64, d)
	gm := make([]float64, d)
	for it := 0; it < 20; it++ {
		fx := value(x, g)
		hess := make([][]float64, d)
		for j := range hess {
			h := 1e-5 * (1 + math.Abs(x[j]))
			xj := x[j]
			x[j] = xj + h
			value(x, gp)
			x[j] = xj - h
			value(x, gm)
			x[j] = xj
			hess[j] = make([]float64, d+1)
			for k := range gp {
				hess[j][k] = (gp[k] - gm[k]) / (2 * h)
			}
			hess[j][d] = -g[j]
		}
		step, ok := solveDense(hess)
		if !ok {
			break
		}
		y := make([]float64, d)
		var size float64
		for j := range y {
			y[j] = x[j] + step[j]
			size = math.Max(size, math.Abs(step[j]))
		}
		if value(y, nil) < fx {
			break
		}
		x = y
		if size < 1e-15 {
			break
		}
	}
	return x
}

// solveDense solves A s = b for the augmented d×(d+1) matrix [A | b] by
// Gaussian elimination with partial pivoting (in place); ok is false when A
// is singular.
func solveDense(m [][]float64) ([]float64, bool) {
	d := len(m)
	for c := 0; c < d; c++ {
		p := c
		for r := c + 1; r < d; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if m[p][c] == 0 {
			return nil, false
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < d; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= d; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	s := make([]float64, d)
	for r := d - 1; r >= 0; r-- {
		v := m[r][d]
		for k := r + 1; k < d; k++ {
			v -= m[r][k] * s[k]
		}
		s[r] = v / m[r][r]
	}
	return s, true
}
