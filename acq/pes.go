package acq

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// pes is predictive entropy search (Hernández-Lobato, Hoffman & Ghahramani
// 2014, Eq. (3)):
//
//	α(x) = H[y_x | D] − E_{x*}[H[y_x | D, x*]]
//	     ≈ ½ log(v(x) + σ_n²) − (1/M) Σ_m ½ log(v_m(x) + σ_n²),
//
// with M samples x*_m of the maximizer (maximizers of whole-function
// posterior samples, pathMaxima) and v_m(x) the variance of f(x) under the
// paper's Gaussian approximation of p(f | D, x* is the maximizer), built as
// in its Sec. 2.1–2.2:
//
//   - condition A (x* is a local maximum): ∇f(x*) = 0 and the Hessian at
//     x* diagonal (off-diagonal entries = 0, exact Gaussian conditioning)
//     with negative diagonal (hard truncations ∂²f/∂x_i² ≤ 0, by EP);
//   - condition B: f(x*) > y_max + ε, ε ~ N(0, σ_n²), i.e. the factor
//     Φ((f(x*) − y_max)/σ_n) with y_max = State.Best (by EP);
//   - condition C at the test point, f(x) ≤ f(x*), by one moment-matching
//     step on the bivariate Gaussian of (f(x), f(x*)):
//     v_m(x) = V_xx − β(β+a)(V_xx − V_x*)²/s, s = V_** + V_xx − 2V_x*,
//     a = (m_* − m_x)/√s, β = φ(a)/Φ(a).
//
// Derivative covariances are computed in closed form for the SE and
// Matérn-5/2 kernels (other kernels are rejected). Departures from the
// paper, each a simplification:
//
//   - x* on a face of the box: for a coordinate at a bound the stationarity
//     condition is replaced by the matching sign condition (∂_i f ≥ 0 at the
//     upper bound, ≤ 0 at the lower, by EP) and the Hessian conditions on
//     that coordinate are dropped (the paper assumes interior maximizers);
//   - hyper-parameters are a point estimate (the paper averages over MCMC
//     samples of them);
//   - EP uses parallel updates with damping 0.5 (at most 200 sweeps);
//   - the acquisition has no analytic gradient: the optimizer uses finite
//     differences (d + 1 evaluations per gradient);
//   - PES scores single points; batches come from Greedy (the batch
//     version, PPES, is a different method).
type pes struct {
	Samples  int              // M, number of x* samples (0: 5)
	Features int              // random Fourier features per path (0: 1000)
	Settings OptimizeSettings // path maximization (zero: see pathMaxima)
}

// ContinuousOnly implements ContinuousOnly: PES conditions on ∇f(x*) = 0.
func (pes) ContinuousOnly() {}

// Functional kinds of f at x*: value, gradient component, Hessian diagonal,
// Hessian off-diagonal.
const (
	fnValue = iota
	fnGrad
	fnHessDiag
	fnHessOff
)

// Constraint kinds on a functional.
const (
	siteEqZero    = iota // = 0, exact conditioning
	siteLE0              // ≤ 0
	siteGE0              // ≥ 0
	siteAboveBest        // f(x*) > y_max + ε
)

type functional struct {
	kind, i, j int
	site       int
}

func (f functional) idx() []int {
	switch f.kind {
	case fnGrad:
		return []int{f.i}
	case fnHessDiag:
		return []int{f.i, f.i}
	case fnHessOff:
		return []int{f.i, f.j}
	}
	return nil
}

// radial describes a kernel k(a,b) = s²·g(ρ), ρ = Σ (a_i−b_i)²/ℓ_i².
type radial struct {
	matern bool
	s2     float64
	ls2    []float64 // ℓ_i²
}

func radialOf(k gp.Kernel) (radial, error) {
	r := radial{s2: k.Variance()}
	switch k.(type) {
	case *gp.SE:
	case *gp.Matern52:
		r.matern = true
	default:
		return r, fmt.Errorf("pes needs derivative covariances, available for the SE and Matérn-5/2 kernels only (got %T)", k)
	}
	p := k.Params()
	r.ls2 = make([]float64, k.Dim())
	for i := range r.ls2 {
		r.ls2[i] = math.Exp(2 * p[i])
	}
	return r, nil
}

// profile returns g(ρ), g'(ρ), g”(ρ).
func (r radial) profile(rho float64) (g0, g1, g2 float64) {
	if !r.matern {
		e := math.Exp(-0.5 * rho)
		return e, -0.5 * e, 0.25 * e
	}
	a := math.Sqrt(5 * rho)
	e := math.Exp(-a)
	return (1 + a + a*a/3) * e, -5.0 / 6 * (1 + a) * e, 25.0 / 12 * e
}

// cross returns cov(F f(a), f(b)) = ∂^F_a k(a, b) for δ = a − b.
func (r radial) cross(F functional, delta []float64) float64 {
	rho := 0.0
	for i, v := range delta {
		rho += v * v / r.ls2[i]
	}
	g0, g1, g2 := r.profile(rho)
	switch F.kind {
	case fnValue:
		return r.s2 * g0
	case fnGrad:
		return r.s2 * g1 * 2 * delta[F.i] / r.ls2[F.i]
	case fnHessDiag:
		i := F.i
		return r.s2 * (g2*4*delta[i]*delta[i]/(r.ls2[i]*r.ls2[i]) + g1*2/r.ls2[i])
	default:
		i, j := F.i, F.j
		return r.s2 * g2 * 4 * delta[i] * delta[j] / (r.ls2[i] * r.ls2[j])
	}
}

// same returns cov(A f(a), B f(a)) = (−1)^{|B|} ∂^{A+B}κ(0), from the Taylor
// expansion κ = s²(1 + g'(0)ρ + g”(0)ρ²/2 + …) at ρ = 0.
func (r radial) same(A, B functional) float64 {
	ia, ib := A.idx(), B.idx()
	all := append(append([]int(nil), ia...), ib...)
	count := map[int]int{}
	for _, i := range all {
		count[i]++
	}
	for _, c := range count {
		if c%2 == 1 {
			return 0
		}
	}
	sign := 1.0
	if len(ib)%2 == 1 {
		sign = -1
	}
	_, g1, g2 := r.profile(0)
	switch len(all) {
	case 0:
		return r.s2
	case 2:
		return sign * r.s2 * 2 * g1 / r.ls2[all[0]]
	case 4:
		if len(count) == 1 {
			i := all[0]
			return sign * r.s2 * 12 * g2 / (r.ls2[i] * r.ls2[i])
		}
		// Divide in a fixed order: ranging over the map would vary the
		// rounding from run to run and break bitwise reproducibility.
		v := sign * r.s2 * 4 * g2
		for _, i := range slices.Sorted(maps.Keys(count)) {
			v /= r.ls2[i]
		}
		return v
	}
	return 0
}

// functionals lists the constrained functionals at x* (condition A/B).
func functionals(xs []float64) []functional {
	const edge = 1e-6
	d := len(xs)
	F := []functional{{kind: fnValue, site: siteAboveBest}}
	interior := make([]bool, d)
	for i, v := range xs {
		switch {
		case v >= 1-edge:
			F = append(F, functional{kind: fnGrad, i: i, site: siteGE0})
		case v <= edge:
			F = append(F, functional{kind: fnGrad, i: i, site: siteLE0})
		default:
			interior[i] = true
			F = append(F, functional{kind: fnGrad, i: i, site: siteEqZero})
			F = append(F, functional{kind: fnHessDiag, i: i, site: siteLE0})
		}
	}
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			if interior[i] && interior[j] {
				F = append(F, functional{kind: fnHessOff, i: i, j: j, site: siteEqZero})
			}
		}
	}
	return F
}

// pesSample holds the query-independent quantities of one x* sample.
type pesSample struct {
	xs    []float64
	F     []functional
	W     *mat.Dense // n×p, (K+σ²I)⁻¹ C_Du
	r, e  []float64  // A(μ_ep − μ_u), AΣ_ep e₀
	B     *mat.Dense // AΣ_epA − A
	mStar float64    // E_q[f(x*)]
	vStar float64    // Var_q[f(x*)]
}

// Prepare implements Scorer.
func (e pes) Prepare(ctx context.Context, s *State, q int) (Func, error) {
	if err := singlePoint("pes", s, q); err != nil {
		return nil, err
	}
	g := s.GP
	rk, err := radialOf(g.Kernel())
	if err != nil {
		return nil, err
	}
	M := orDefault(e.Samples, 5)
	Xs, _, err := pathMaxima(ctx, g, M, orDefault(e.Features, 1000), e.Settings, s.Rand)
	if err != nil {
		return nil, fmt.Errorf("pes: %w", err)
	}
	X := g.X()
	n, d := X.Dims()
	K := gp.CrossCov(g.Kernel(), X, X)
	Ks := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			Ks.SetSym(i, j, K.At(i, j))
		}
		Ks.SetSym(i, i, K.At(i, i)+g.NoiseVar()+g.Jitter())
	}
	var chol mat.Cholesky
	if !chol.Factorize(Ks) {
		return nil, fmt.Errorf("pes: training covariance is not positive definite")
	}
	alpha := g.Alpha()
	f := &pesFunc{g: g, rk: rk, noise: g.NoiseVar()}
	delta := make([]float64, d)
	for m := 0; m < M; m++ {
		xs := Xs.RawRowView(m)
		F := functionals(xs)
		p := len(F)
		CuD := mat.NewDense(p, n, nil)
		for a, Fa := range F {
			for i := 0; i < n; i++ {
				for c := range delta {
					delta[c] = xs[c] - X.At(i, c)
				}
				CuD.Set(a, i, rk.cross(Fa, delta))
			}
		}
		mu := make([]float64, p)
		for a := range mu {
			mu[a] = mat.Dot(CuD.RowView(a), mat.NewVecDense(n, alpha))
		}
		var W mat.Dense
		if err := chol.SolveTo(&W, CuD.T()); err != nil {
			return nil, fmt.Errorf("pes: solve: %w", err)
		}
		Su := mat.NewDense(p, p, nil)
		Su.Mul(CuD, &W)
		for a := 0; a < p; a++ {
			for b := 0; b < p; b++ {
				Su.Set(a, b, rk.same(F[a], F[b])-Su.At(a, b))
			}
		}
		symmetrize(Su)
		muEP, SEP, err := pesEP(mu, Su, F, s.Best, math.Sqrt(g.NoiseVar()+g.Jitter()))
		if err != nil {
			return nil, fmt.Errorf("pes: sample %d: %w", m+1, err)
		}
		A, err := invSPD(Su)
		if err != nil {
			return nil, fmt.Errorf("pes: sample %d: %w", m+1, err)
		}
		smp := &pesSample{xs: append([]float64(nil), xs...), F: F, W: &W, mStar: muEP[0], vStar: SEP.At(0, 0)}
		dm := make([]float64, p)
		for a := range dm {
			dm[a] = muEP[a] - mu[a]
		}
		smp.r = matVec(A, dm)
		var ASA, tmp mat.Dense
		tmp.Mul(A, SEP)
		ASA.Mul(&tmp, A)
		ASA.Sub(&ASA, A)
		smp.B = &ASA
		smp.e = make([]float64, p)
		for a := 0; a < p; a++ {
			smp.e[a] = tmp.At(a, 0)
		}
		f.samples = append(f.samples, smp)
	}
	return f, nil
}

type pesFunc struct {
	g       *gp.GP
	rk      radial
	noise   float64
	samples []*pesSample
}

// Eval returns α(x) (no gradient; see PES).
func (f *pesFunc) Eval(X, _ *mat.Dense) float64 {
	x := X.RawRowView(0)
	d := len(x)
	mu, v := f.g.MeanVar(x)
	Xd := f.g.X()
	n, _ := Xd.Dims()
	kx := make([]float64, n)
	k := f.g.Kernel()
	for i := 0; i < n; i++ {
		kx[i] = k.Eval(x, Xd.RawRowView(i))
	}
	delta := make([]float64, d)
	sum := 0.0
	for _, smp := range f.samples {
		p := len(smp.F)
		c := make([]float64, p)
		for i := range delta {
			delta[i] = smp.xs[i] - x[i]
		}
		for a, Fa := range smp.F {
			w := 0.0
			for i := 0; i < n; i++ {
				w += smp.W.At(i, a) * kx[i]
			}
			c[a] = f.rk.cross(Fa, delta) - w
		}
		mx, vx, cx := mu, v, 0.0
		for a := 0; a < p; a++ {
			mx += c[a] * smp.r[a]
			cx += c[a] * smp.e[a]
			row := smp.B.RawRowView(a)
			t := 0.0
			for b := 0; b < p; b++ {
				t += row[b] * c[b]
			}
			vx += c[a] * t
		}
		vx = math.Max(vx, 1e-12)
		// Condition C: f(x) ≤ f(x*).
		ss := math.Max(smp.vStar+vx-2*cx, 1e-12)
		a := (smp.mStar - mx) / math.Sqrt(ss)
		b := invMills(a)
		vn := vx - b*(b+a)*(vx-cx)*(vx-cx)/ss
		vn = math.Max(vn, 1e-12)
		sum += 0.5 * math.Log(vn+f.noise)
	}
	return 0.5*math.Log(v+f.noise) - sum/float64(len(f.samples))
}
