package tes

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/internal/linalg"
)

// multiInfo is the query-independent part of multi-output TES for one
// iteration (see the package doc, "Several outputs"): the trusted set T,
// each output's posterior conditioned on noise-free values at T, joint
// posterior samples of every output at T and, for each scalarization λ_l,
// the partition of those samples by their trusted solution x*_λ. Its
// eval returns the Gaussian lower bound
//
//	α(B) = ½ log det C_B − (1/L) Σ_l Σ_g p_lg ½ log det C_{B|lg}
//
// and its gradient with respect to the batch.
type multiInfo struct {
	T       *mat.Dense
	cond    []*gp.Conditioned // per output, conditioned on f at T
	noise   []float64         // per output σ_k²
	f       [][]float64       // S samples, each m·|T| (output-major)
	groups  [][][]int         // per λ: groups of sample indices
	pending *mat.Dense
	base    float64 // α(P), subtracted so that α(B|P) = α(P ∪ B) − α(P)
}

// minGroup is the number of samples below which a group's covariance is
// not trusted: smaller groups are pooled (see groupSamples).
const minGroup = 8

// groupSamples partitions sample indices by label. Labels with fewer than
// minGroup samples are pooled into one group (a coarser variable, whose
// information is a lower bound on the finer one's); a pool still below
// minGroup joins the largest group. The order is deterministic (by first
// occurrence).
func groupSamples(labels []int) [][]int {
	idx := map[int]int{}
	var gs [][]int
	for s, l := range labels {
		i, ok := idx[l]
		if !ok {
			i = len(gs)
			idx[l] = i
			gs = append(gs, nil)
		}
		gs[i] = append(gs[i], s)
	}
	var out [][]int
	var rare []int
	for _, g := range gs {
		if len(g) < minGroup {
			rare = append(rare, g...)
		} else {
			out = append(out, g)
		}
	}
	if len(rare) == 0 {
		return out
	}
	if len(rare) >= minGroup || len(out) == 0 {
		return append(out, rare)
	}
	big := 0
	for i, g := range out {
		if len(g) > len(out[big]) {
			big = i
		}
	}
	out[big] = append(out[big], rare...)
	return out
}

// covBlock is one covariance C = D + Cov_c(u) with its weight in α and its
// gradient factors.
type covBlock struct {
	w       float64
	members []int // nil: every sample
}

// eval returns α(XB ∪ P) − α(P) and, when grad is non-nil (q×d), its
// gradient with respect to XB.
func (mi *multiInfo) eval(XB, grad *mat.Dense) float64 {
	X := XB
	q, d := XB.Dims()
	if mi.pending != nil {
		p, _ := mi.pending.Dims()
		X = mat.NewDense(q+p, d, nil)
		X.Stack(XB, mi.pending)
	}
	v, gX := mi.info(X, grad != nil)
	if grad != nil {
		for i := 0; i < q; i++ {
			grad.SetRow(i, gX.RawRowView(i))
		}
	}
	return v - mi.base
}

// info returns α(X) for the stacked points X (nB×d) and, if wantGrad,
// ∂α/∂X.
func (mi *multiInfo) info(X *mat.Dense, wantGrad bool) (float64, *mat.Dense) {
	nB, d := X.Dims()
	m := len(mi.cond)
	nT, _ := mi.T.Dims()
	dim := m * nB
	A := make([]*mat.Dense, m)
	vjps := make([]func(gA *mat.Dense, gb []float64, gS *mat.Dense) *mat.Dense, m)
	D := mat.NewSymDense(dim, nil)
	for k, c := range mi.cond {
		var S *mat.SymDense
		A[k], _, S, vjps[k] = c.PredictGrad(X)
		for i := 0; i < nB; i++ {
			for j := i; j < nB; j++ {
				v := S.At(i, j)
				if i == j {
					v += mi.noise[k]
				}
				D.SetSym(k*nB+i, k*nB+j, v)
			}
		}
	}
	// u_s = A f^s (the part of y_B's conditional mean that varies with f_T).
	S := len(mi.f)
	u := make([][]float64, S)
	for s, fs := range mi.f {
		us := make([]float64, dim)
		for k := 0; k < m; k++ {
			Ak := A[k].RawMatrix()
			ft := fs[k*nT : (k+1)*nT]
			for i := 0; i < nB; i++ {
				us[k*nB+i] = linalg.Dot(Ak.Data[i*Ak.Stride:i*Ak.Stride+nT], ft)
			}
		}
		u[s] = us
	}
	blocks := []covBlock{{w: 1}}
	L := float64(len(mi.groups))
	for _, gs := range mi.groups {
		for _, g := range gs {
			blocks = append(blocks, covBlock{w: -float64(len(g)) / float64(S) / L, members: g})
		}
	}
	total := 0.0
	var gD *mat.Dense  // Σ_c w_c ½ C_c⁻¹
	var gAF *mat.Dense // Σ_c w_c C_c⁻¹ Cov_c(u, f)  (dim × m·nT)
	if wantGrad {
		gD = mat.NewDense(dim, dim, nil)
		gAF = mat.NewDense(dim, m*nT, nil)
	}
	for _, b := range blocks {
		C, cuf := mi.blockCov(D, u, b.members, wantGrad)
		var ch mat.Cholesky
		if !ch.Factorize(C) {
			return math.Inf(-1), mat.NewDense(nB, d, nil)
		}
		total += b.w * 0.5 * ch.LogDet()
		if wantGrad {
			var inv mat.SymDense
			if err := ch.InverseTo(&inv); err != nil {
				return math.Inf(-1), mat.NewDense(nB, d, nil)
			}
			var t mat.Dense
			t.Scale(0.5*b.w, &inv)
			gD.Add(gD, &t)
			var g mat.Dense
			g.Mul(&inv, cuf)
			g.Scale(b.w, &g)
			gAF.Add(gAF, &g)
		}
	}
	if !wantGrad {
		return total, nil
	}
	gX := mat.NewDense(nB, d, nil)
	for k := 0; k < m; k++ {
		gA := mat.DenseCopyOf(gAF.Slice(k*nB, (k+1)*nB, k*nT, (k+1)*nT))
		gS := mat.DenseCopyOf(gD.Slice(k*nB, (k+1)*nB, k*nB, (k+1)*nB))
		gX.Add(gX, vjps[k](gA, nil, gS))
	}
	return total, gX
}

// blockCov returns C = D + Cov(u) over the given samples (all when
// members is nil; 1/n normalization, so the pooled covariance is the
// p-weighted within-group covariance plus the between-group one exactly)
// and, if wantCross, the cross-covariance Cov(u, f) (dim × m·|T|).
func (mi *multiInfo) blockCov(D *mat.SymDense, u [][]float64, members []int, wantCross bool) (*mat.SymDense, *mat.Dense) {
	if members == nil {
		members = make([]int, len(u))
		for i := range members {
			members[i] = i
		}
	}
	dim := D.SymmetricDim()
	nf := len(mi.f[0])
	n := float64(len(members))
	mu := make([]float64, dim)
	mf := make([]float64, nf)
	for _, s := range members {
		for i, v := range u[s] {
			mu[i] += v / n
		}
		if wantCross {
			for i, v := range mi.f[s] {
				mf[i] += v / n
			}
		}
	}
	C := mat.NewSymDense(dim, nil)
	C.CopySym(D)
	cu := make([]float64, dim)
	var cross *mat.Dense
	if wantCross {
		cross = mat.NewDense(dim, nf, nil)
	}
	cf := make([]float64, nf)
	for _, s := range members {
		for i := range cu {
			cu[i] = u[s][i] - mu[i]
		}
		for i := 0; i < dim; i++ {
			for j := i; j < dim; j++ {
				C.SetSym(i, j, C.At(i, j)+cu[i]*cu[j]/n)
			}
		}
		if wantCross {
			for i := range cf {
				cf[i] = mi.f[s][i] - mf[i]
			}
			raw := cross.RawMatrix()
			for i := 0; i < dim; i++ {
				row := raw.Data[i*raw.Stride : i*raw.Stride+nf]
				a := cu[i] / n
				for j, v := range cf {
					row[j] += a * v
				}
			}
		}
	}
	// A relative jitter keeps C positive definite when the noise is tiny
	// and the batch repeats a trusted point.
	tr := 0.0
	for i := 0; i < dim; i++ {
		tr += C.At(i, i)
	}
	for i := 0; i < dim; i++ {
		C.SetSym(i, i, C.At(i, i)+1e-10*tr/float64(dim)+1e-12)
	}
	return C, cross
}
