package acq

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/internal/linalg"
)

// PES is predictive entropy search (Hernández-Lobato, Hoffman & Ghahramani
// 2014, Eq. (3)):
//
//	α(x) = H[y_x | D] − E_{x*}[H[y_x | D, x*]]
//	     ≈ ½ log(v(x) + σ_n²) − (1/M) Σ_m ½ log(v_m(x) + σ_n²),
//
// with M samples x*_m of the maximizer (maximizers of whole-function
// posterior samples, PathMaxima) and v_m(x) the variance of f(x) under the
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
type PES struct {
	Samples  int              // M, number of x* samples (0: 5)
	Features int              // random Fourier features per path (0: 1000)
	Settings OptimizeSettings // path maximization (zero: see PathMaxima)
}

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
func (e PES) Prepare(ctx context.Context, s *State, q int) (Func, error) {
	if err := singlePoint("pes", s, q); err != nil {
		return nil, err
	}
	g := s.GP
	rk, err := radialOf(g.Kernel())
	if err != nil {
		return nil, err
	}
	M := orDefault(e.Samples, 5)
	Xs, _, err := PathMaxima(ctx, g, M, orDefault(e.Features, 1000), e.Settings, s.Rand)
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
		b := InvMills(a)
		vn := vx - b*(b+a)*(vx-cx)*(vx-cx)/ss
		vn = math.Max(vn, 1e-12)
		sum += 0.5 * math.Log(vn+f.noise)
	}
	return 0.5*math.Log(v+f.noise) - sum/float64(len(f.samples))
}

// pesEP returns the Gaussian approximation N(μ_ep, Σ_ep) of
// N(μ, Σ) × Π constraints on the functionals F: exact conditioning on the
// equalities, EP for the truncations (y_max = best, noise sd sn for the
// soft condition B). Entries of equality-constrained functionals are 0.
func pesEP(mu []float64, S *mat.Dense, F []functional, best, sn float64) ([]float64, *mat.Dense, error) {
	p := len(mu)
	var E, I []int
	for a, Fa := range F {
		if Fa.site == siteEqZero {
			E = append(E, a)
		} else {
			I = append(I, a)
		}
	}
	k := len(I)
	muC := make([]float64, k)
	SC := mat.NewDense(k, k, nil)
	for a, ia := range I {
		muC[a] = mu[ia]
		for b, ib := range I {
			SC.Set(a, b, S.At(ia, ib))
		}
	}
	if len(E) > 0 {
		// Condition on u_E = 0.
		e := len(E)
		SEE := mat.NewDense(e, e, nil)
		SIE := mat.NewDense(k, e, nil)
		muE := make([]float64, e)
		for a, ea := range E {
			muE[a] = mu[ea]
			for b, eb := range E {
				SEE.Set(a, b, S.At(ea, eb))
			}
			for b, ib := range I {
				SIE.Set(b, a, S.At(ib, ea))
			}
		}
		inv, err := invSPD(SEE)
		if err != nil {
			return nil, nil, fmt.Errorf("equality conditions: %w", err)
		}
		var G mat.Dense // Σ_IE Σ_EE⁻¹
		G.Mul(SIE, inv)
		shift := matVec(&G, muE)
		for a := range muC {
			muC[a] -= shift[a]
		}
		var corr mat.Dense
		corr.Mul(&G, SIE.T())
		SC.Sub(SC, &corr)
		symmetrize(SC)
	}
	sites := make([]functional, k)
	for a, ia := range I {
		sites[a] = F[ia]
	}
	mt, St, err := epTruncations(muC, SC, sites, best, sn)
	if err != nil {
		return nil, nil, err
	}
	muEP := make([]float64, p)
	SEP := mat.NewDense(p, p, nil)
	for a, ia := range I {
		muEP[ia] = mt[a]
		for b, ib := range I {
			SEP.Set(ia, ib, St.At(a, b))
		}
	}
	return muEP, SEP, nil
}

// epTruncations runs expectation propagation for N(μ, Σ) times one
// univariate factor per coordinate: Φ((u_0 − best)/sn) for siteAboveBest,
// I(u ≤ 0) for siteLE0, I(u ≥ 0) for siteGE0. Sites are Gaussian in natural
// parameters (τ̃, ν̃), updated in parallel with damping 0.5 until they
// change by less than 1e-9 (relative) or 200 sweeps.
func epTruncations(mu []float64, S *mat.Dense, sites []functional, best, sn float64) ([]float64, *mat.Dense, error) {
	k := len(mu)
	tau := make([]float64, k)
	nu := make([]float64, k)
	post := func() ([]float64, *mat.Dense, error) {
		// Σ = S − S R B⁻¹ R S, B = I + R S R, R = diag(√τ̃);
		// μ = Σν̃ + μ_c − S R B⁻¹ R μ_c.
		R := make([]float64, k)
		for i, t := range tau {
			R[i] = math.Sqrt(t)
		}
		B := mat.NewSymDense(k, nil)
		for i := 0; i < k; i++ {
			for j := 0; j <= i; j++ {
				v := R[i] * S.At(i, j) * R[j]
				if i == j {
					v++
				}
				B.SetSym(i, j, v)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(B) {
			return nil, nil, fmt.Errorf("EP: site update made the covariance indefinite")
		}
		RS := mat.NewDense(k, k, nil)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				RS.Set(i, j, R[i]*S.At(i, j))
			}
		}
		var V mat.Dense // B⁻¹ R S
		if err := ch.SolveTo(&V, RS); err != nil {
			return nil, nil, err
		}
		var corr mat.Dense
		corr.Mul(RS.T(), &V)
		Sig := mat.DenseCopyOf(S)
		Sig.Sub(Sig, &corr)
		symmetrize(Sig)
		m := matVec(Sig, nu)
		// S R B⁻¹ R μ_c = (B⁻¹ R S)ᵀ R μ_c ... use V: S R B⁻¹ R = Vᵀ R.
		Rm := make([]float64, k)
		for i := range Rm {
			Rm[i] = R[i] * mu[i]
		}
		t := make([]float64, k)
		for i := 0; i < k; i++ {
			for j := 0; j < k; j++ {
				t[i] += V.At(j, i) * Rm[j]
			}
		}
		for i := range m {
			m[i] += mu[i] - t[i]
		}
		return m, Sig, nil
	}
	const damp = 0.5
	for sweep := 0; sweep < 200; sweep++ {
		m, Sig, err := post()
		if err != nil {
			return nil, nil, err
		}
		change := 0.0
		for i, st := range sites {
			vi := Sig.At(i, i)
			if !(vi > 0) {
				continue
			}
			s2 := 1 / (1/vi - tau[i])
			if !(s2 > 0) || math.IsInf(s2, 0) {
				continue
			}
			mc := s2 * (m[i]/vi - nu[i])
			var sgn, thr, n2 float64
			switch st.site {
			case siteAboveBest:
				sgn, thr, n2 = 1, best, sn*sn
			case siteGE0:
				sgn = 1
			case siteLE0:
				sgn = -1
			default:
				continue
			}
			den := math.Sqrt(s2 + n2)
			z := sgn * (mc - thr) / den
			lam := InvMills(z)
			mh := mc + sgn*s2*lam/den
			vh := s2 - s2*s2*lam*(z+lam)/(s2+n2)
			if !(vh > 0) {
				vh = s2 * 1e-10
			}
			nt := math.Max(1/vh-1/s2, 0)
			nn := mh/vh - mc/s2
			nt = (1-damp)*tau[i] + damp*nt
			nn = (1-damp)*nu[i] + damp*nn
			change = math.Max(change, math.Abs(nt-tau[i])/(1+math.Abs(nt)))
			change = math.Max(change, math.Abs(nn-nu[i])/(1+math.Abs(nn)))
			tau[i], nu[i] = nt, nn
		}
		if change < 1e-9 {
			break
		}
	}
	return post()
}

func symmetrize(A *mat.Dense) {
	n, _ := A.Dims()
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			v := 0.5 * (A.At(i, j) + A.At(j, i))
			A.Set(i, j, v)
			A.Set(j, i, v)
		}
	}
}

// invSPD inverts a symmetric positive (semi)definite matrix through its
// correlation form D⁻½AD⁻½ (so entries of very different scales, like f and
// its second derivatives, do not spoil the jitter), with jitter escalation.
func invSPD(A *mat.Dense) (*mat.Dense, error) {
	n, _ := A.Dims()
	dsc := make([]float64, n)
	for i := range dsc {
		dsc[i] = 1 / math.Sqrt(math.Max(A.At(i, i), 1e-300))
	}
	a := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			a[i*n+j] = A.At(i, j) * dsc[i] * dsc[j]
		}
	}
	l := make([]float64, n*n)
	if _, err := linalg.Cholesky(l, a, n); err != nil {
		return nil, err
	}
	L := mat.NewTriDense(n, mat.Lower, l)
	var Li mat.TriDense
	if err := Li.InverseTri(L); err != nil {
		return nil, fmt.Errorf("invert factor: %w", err)
	}
	out := mat.NewDense(n, n, nil)
	out.Mul(Li.T(), &Li)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out.Set(i, j, out.At(i, j)*dsc[i]*dsc[j])
		}
	}
	return out, nil
}

func matVec(A mat.Matrix, v []float64) []float64 {
	r, c := A.Dims()
	out := make([]float64, r)
	for i := 0; i < r; i++ {
		s := 0.0
		for j := 0; j < c; j++ {
			s += A.At(i, j) * v[j]
		}
		out[i] = s
	}
	return out
}
