package tes

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/internal/linalg"
)

// epSettings controls expectation propagation for q_ep(f_X* | y_D, x*)
// (Appendix D). The zero value is the default.
type epSettings struct {
	// Damping is the fraction δ ∈ (0, 1] of each site step taken (new site
	// natural parameters = (1−δ)·old + δ·proposed). Zero means 1 (undamped),
	// which from flat sites converges in ~10 sweeps for |X*| = 5
	// (package doc, reading 5). If a run fails to converge within MaxSweeps, EP
	// restarts from flat sites with δ halved, down to 0.25; damping does not
	// change the fixed point, only the path to it.
	Damping float64
	// Tol is the convergence threshold on the largest change of a posterior
	// mean (in prior standard deviations) or variance (relative to the prior
	// variance) over one sweep. Zero means 1e-10.
	Tol float64
	// MaxSweeps caps the number of sweeps over all sites per attempt. Zero
	// means 200.
	MaxSweeps int
}

func (s epSettings) withDefaults() epSettings {
	if s.Damping <= 0 || s.Damping > 1 {
		s.Damping = 1
	}
	if s.Tol <= 0 {
		s.Tol = 1e-10
	}
	if s.MaxSweeps <= 0 {
		s.MaxSweeps = 200
	}
	return s
}

// epResult is the Gaussian approximation q_ep(f_X* | y_D, x*) = N(Mean, Cov)
// of Appendix D together with diagnostics.
type epResult struct {
	Mean []float64     // μ_ep, Eq. (12) of the paper (labelled eq:epcov; the labels are swapped, reading 6 of the package doc)
	Cov  *mat.SymDense // Σ_ep, Eq. (11)
	// Sweeps is the number of sweeps of the final attempt; Converged reports
	// whether it met Tol; Damping is the δ of that attempt.
	Sweeps    int
	Converged bool
	Damping   float64
	// Skipped counts site updates left out because the cavity variance
	// τ_\x' was not positive (possible only through rounding, since all site
	// precisions stay ≥ 0) or the step would make Σ_ep indefinite; the old
	// site is then kept for that update. Degenerate counts constraints whose
	// difference f(x*) − f(x') has (numerically) zero prior variance
	// (near-duplicate maximizers); those sites stay flat.
	Skipped    int
	Degenerate int
}

// maximizerEP approximates the Gaussian N(mean, cov) of f_X* truncated to
// f_star ≥ f_i for every i ≠ star — the posterior p(f_X* | y_D, x*) of
// Appendix D — by a Gaussian, using one EP site per constraint
// c_iᵀ f ≥ 0 with c_i = e_star − e_i (|X*| − 1 sites). Sites start flat and
// are updated sequentially with rank-one updates of Σ_ep; after every sweep
// μ_ep and Σ_ep are recomputed from the site parameters to stop rounding
// drift. Tilted moments use truncMoments (continued fraction below β = −5).
func maximizerEP(mean []float64, cov mat.Symmetric, star int, s epSettings) (*epResult, error) {
	k := len(mean)
	if cov.SymmetricDim() != k {
		return nil, fmt.Errorf("tes: EP: mean has %d entries but covariance is %d×%d", k, cov.SymmetricDim(), cov.SymmetricDim())
	}
	if star < 0 || star >= k {
		return nil, fmt.Errorf("tes: EP: maximizer index %d outside [0, %d)", star, k)
	}
	if !allFinite(mean) {
		return nil, fmt.Errorf("tes: EP: prior mean has non-finite entries")
	}
	kt, _ := symData(cov)
	if !allFinite(kt) {
		return nil, fmt.Errorf("tes: EP: prior covariance has non-finite entries")
	}
	s = s.withDefaults()
	var last *epResult
	for damp := s.Damping; ; damp *= 0.5 {
		r, err := runEP(mean, kt, k, star, s, damp)
		if err != nil {
			return nil, err
		}
		last = r
		if r.Converged || damp <= 0.25 {
			break
		}
	}
	return last, nil
}

// epState holds the current q_ep in moment form plus site natural params.
type epState struct {
	k, star int
	m       []float64 // prior mean m̃
	kt      []float64 // prior covariance K̃ (row-major)
	mu      []float64 // μ_ep
	sig     []float64 // Σ_ep
	nu, eta []float64 // site precisions 1/τ̃ and precision-means μ̃/τ̃, indexed by x' (star unused)
	degen   []bool
	sc      []float64 // scratch: Σ c
}

func runEP(mean, kt []float64, k, star int, s epSettings, damp float64) (*epResult, error) {
	st := &epState{
		k: k, star: star, m: mean, kt: kt,
		mu:  append([]float64(nil), mean...),
		sig: append([]float64(nil), kt...),
		nu:  make([]float64, k), eta: make([]float64, k),
		degen: make([]bool, k), sc: make([]float64, k),
	}
	res := &epResult{Damping: damp}
	for i := 0; i < k; i++ {
		if i == star {
			continue
		}
		v := kt[star*k+star] + kt[i*k+i] - 2*kt[star*k+i]
		if !(v > 1e-12*(kt[star*k+star]+kt[i*k+i])) {
			st.degen[i] = true
			res.Degenerate++
		}
	}
	prevMu := make([]float64, k)
	prevVar := make([]float64, k)
	for sweep := 1; sweep <= s.MaxSweeps; sweep++ {
		copy(prevMu, st.mu)
		for i := 0; i < k; i++ {
			prevVar[i] = st.sig[i*k+i]
		}
		for i := 0; i < k; i++ {
			if i == star || st.degen[i] {
				continue
			}
			if !st.update(i, damp) {
				res.Skipped++
			}
		}
		if err := st.recompute(); err != nil {
			return nil, fmt.Errorf("tes: EP sweep %d: %w", sweep, err)
		}
		delta := 0.0
		for i := 0; i < k; i++ {
			d1 := math.Abs(st.mu[i]-prevMu[i]) / math.Sqrt(kt[i*k+i])
			d2 := math.Abs(st.sig[i*k+i]-prevVar[i]) / kt[i*k+i]
			delta = math.Max(delta, math.Max(d1, d2))
		}
		res.Sweeps = sweep
		if math.IsNaN(delta) {
			return nil, fmt.Errorf("tes: EP sweep %d produced NaN moments", sweep)
		}
		if delta < s.Tol {
			res.Converged = true
			break
		}
	}
	res.Mean = st.mu
	res.Cov = mat.NewSymDense(k, st.sig)
	return res, nil
}

// update performs one damped EP update of site i (constraint
// f_star − f_i ≥ 0) with rank-one updates of Σ_ep and μ_ep. It returns
// false (keeping the old site) if the cavity is invalid.
func (st *epState) update(i int, damp float64) bool {
	k, j := st.k, st.star
	sig := st.sig
	for r := 0; r < k; r++ {
		st.sc[r] = sig[r*k+j] - sig[r*k+i]
	}
	sv := st.sc[j] - st.sc[i] // cᵀΣc
	mv := st.mu[j] - st.mu[i] // cᵀμ
	if !(sv > 0) {
		return false
	}
	// Cavity of c_iᵀf: τ_\ = (1/s − ν̃)⁻¹, μ_\ = τ_\ (m/s − η̃).
	precCav := 1/sv - st.nu[i]
	if !(precCav > 0) || math.IsInf(precCav, 0) {
		return false
	}
	tauCav := 1 / precCav
	muCav := tauCav * (mv/sv - st.eta[i])
	sdCav := math.Sqrt(tauCav)
	beta := muCav / sdCav
	lambda, v := truncMoments(beta)
	// Tilted moments μ̂ = μ_\ + √τ_\ λ, τ̂ = τ_\ v; new site in natural form:
	// ν = 1/τ̂ − 1/τ_\ ≥ 0, η = μ̂/τ̂ − μ_\/τ_\.
	muHat := muCav + sdCav*lambda
	nuNew := (1/v - 1) * precCav
	etaNew := muHat/(tauCav*v) - muCav*precCav
	if nuNew < 0 { // v ≤ 1 always; guard rounding
		nuNew = 0
	}
	nuNew = (1-damp)*st.nu[i] + damp*nuNew
	etaNew = (1-damp)*st.eta[i] + damp*etaNew
	dnu := nuNew - st.nu[i]
	deta := etaNew - st.eta[i]
	den := 1 + dnu*sv
	if !(den > 0) || math.IsInf(nuNew, 0) || math.IsNaN(etaNew) {
		return false
	}
	// Σ' = Σ − κ Σc cᵀΣ, κ = Δν/(1+Δν s); μ' = μ + Σc (Δη − Δν m)/(1+Δν s).
	kappa := dnu / den
	coef := (deta - dnu*mv) / den
	for r := 0; r < k; r++ {
		st.mu[r] += st.sc[r] * coef
		a := kappa * st.sc[r]
		row := sig[r*k : r*k+k]
		for c := 0; c < k; c++ {
			row[c] -= a * st.sc[c]
		}
	}
	st.nu[i] = nuNew
	st.eta[i] = etaNew
	return true
}

// recompute rebuilds μ_ep and Σ_ep from the sites (Eqs. (12) and (11))
// without inverting K̃: with W = K̃ Cᵀ, V = diag(√ν̃) and
// B = I + V C K̃ Cᵀ V (positive definite),
//
//	Σ_ep = K̃ − W V B⁻¹ V Wᵀ,
//	μ_ep = m̃ + W η̃ − W V B⁻¹ V (C m̃ + C K̃ Cᵀ η̃).
func (st *epState) recompute() error {
	k, j := st.k, st.star
	idx := make([]int, 0, k-1)
	for i := 0; i < k; i++ {
		if i != j && !st.degen[i] {
			idx = append(idx, i)
		}
	}
	p := len(idx)
	if p == 0 {
		copy(st.mu, st.m)
		copy(st.sig, st.kt)
		return nil
	}
	kt := st.kt
	// W (k×p): column r = K̃ c_r = K̃[:, j] − K̃[:, i_r].
	w := make([]float64, k*p)
	for a := 0; a < k; a++ {
		for r, i := range idx {
			w[a*p+r] = kt[a*k+j] - kt[a*k+i]
		}
	}
	// CK̃Cᵀ (p×p): entry (r, s) = W[j, s] − W[i_r, s].
	ckc := make([]float64, p*p)
	for r, i := range idx {
		for c := 0; c < p; c++ {
			ckc[r*p+c] = w[j*p+c] - w[i*p+c]
		}
	}
	symmetrize(ckc, p)
	vs := make([]float64, p)
	eta := make([]float64, p)
	for r, i := range idx {
		vs[r] = math.Sqrt(st.nu[i])
		eta[r] = st.eta[i]
	}
	b := make([]float64, p*p)
	for r := 0; r < p; r++ {
		for c := 0; c < p; c++ {
			b[r*p+c] = vs[r] * ckc[r*p+c] * vs[c]
		}
		b[r*p+r]++
	}
	lb := make([]float64, p*p)
	if _, err := linalg.Cholesky(lb, b, p); err != nil {
		return fmt.Errorf("EP site matrix: %w", err)
	}
	// u = C m̃ + CK̃Cᵀ η̃.
	u := make([]float64, p)
	for r, i := range idx {
		s := st.m[j] - st.m[i]
		for c := 0; c < p; c++ {
			s += ckc[r*p+c] * eta[c]
		}
		u[r] = vs[r] * s
	}
	linalg.SolveLower(lb, p, u, 1)
	linalg.SolveLowerT(lb, p, u, 1) // B⁻¹ V u
	for r := 0; r < p; r++ {
		u[r] = eta[r] - vs[r]*u[r] // η̃ − V B⁻¹ V u
	}
	for a := 0; a < k; a++ {
		s := st.m[a]
		for r := 0; r < p; r++ {
			s += w[a*p+r] * u[r]
		}
		st.mu[a] = s
	}
	// Σ = K̃ − (L_B⁻¹ V Wᵀ)ᵀ (L_B⁻¹ V Wᵀ).
	vwt := make([]float64, p*k)
	for r := 0; r < p; r++ {
		for a := 0; a < k; a++ {
			vwt[r*k+a] = vs[r] * w[a*p+r]
		}
	}
	linalg.SolveLower(lb, p, vwt, k)
	copy(st.sig, kt)
	gemm(true, false, -1, vwt, p, k, vwt, p, k, 1, st.sig)
	symmetrize(st.sig, k)
	if !allFinite(st.mu) || !allFinite(st.sig) {
		return fmt.Errorf("non-finite EP moments")
	}
	return nil
}
