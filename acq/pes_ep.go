package acq

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

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
	const damp = 0.5
	for sweep := 0; sweep < 200; sweep++ {
		m, Sig, err := epPosterior(mu, S, tau, nu)
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
			lam := invMills(z)
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
	return epPosterior(mu, S, tau, nu)
}

// epPosterior is the Gaussian N(μ, Σ) × Π sites of epTruncations: the prior
// N(mu, S) times the sites' natural parameters (tau, nu).
func epPosterior(mu []float64, S *mat.Dense, tau, nu []float64) ([]float64, *mat.Dense, error) {
	k := len(mu)
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
