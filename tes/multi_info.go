package tes

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// multiInfo is the query-independent part of multi-output TES for one
// iteration (see the package doc, "Several outputs"): the trusted set T,
// each output's posterior conditioned on noise-free values at T, and the
// covariances Σ_c of every output's values at T over all joint posterior
// samples and within each group of samples that share a trusted solution
// under a scalarization λ_l. Its eval returns the Gaussian lower bound
//
//	α(B) = ½ log det C_B − (1/L) Σ_l Σ_g p_lg ½ log det C_{B|lg},  C_c = D + A Σ_c Aᵀ,
//
// and its gradient with respect to the batch.
type multiInfo struct {
	T       *mat.Dense
	cond    []*gp.Conditioned // per output, conditioned on f at T
	noise   []float64         // per output σ_k²
	blocks  []covBlock        // the total covariance first, then the groups'
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

// covBlock is one term of α: its weight (1 for the total covariance,
// −p_lg/L for group g under λ_l) and Σ_c, the 1/n covariance of the
// samples' values at T (m·|T| × m·|T|, output-major).
type covBlock struct {
	w     float64
	sigma *mat.Dense
}

// newBlocks returns the total covariance of the samples f (each m·|T|
// values) and, for each partition in groups (one per λ), each group's
// covariance weighted by −(its share)/L. With 1/n normalization the total
// is exactly the share-weighted within-group covariances plus the
// between-group one, which makes α ≥ 0 (log det is concave).
func newBlocks(f [][]float64, groups [][][]int) []covBlock {
	all := make([]int, len(f))
	for i := range all {
		all[i] = i
	}
	out := []covBlock{{w: 1, sigma: sampleCov(f, all)}}
	L := float64(len(groups))
	for _, gs := range groups {
		for _, g := range gs {
			out = append(out, covBlock{w: -float64(len(g)) / float64(len(f)) / L, sigma: sampleCov(f, g)})
		}
	}
	return out
}

// sampleCov is the 1/n covariance of the rows f[i], i in members.
func sampleCov(f [][]float64, members []int) *mat.Dense {
	M := len(f[0])
	n := float64(len(members))
	mu := make([]float64, M)
	for _, i := range members {
		for j, v := range f[i] {
			mu[j] += v / n
		}
	}
	c := mat.NewSymDense(M, nil)
	d := make([]float64, M)
	for _, i := range members {
		for j, v := range f[i] {
			d[j] = v - mu[j]
		}
		c.SymRankOne(c, 1/n, mat.NewVecDense(M, d))
	}
	return mat.DenseCopyOf(c)
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
	dim, M := m*nB, m*nT
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
	total := 0.0
	var gD *mat.Dense  // Σ_c w_c ½ C_c⁻¹
	var gAF *mat.Dense // Σ_c w_c C_c⁻¹ A Σ_c  (dim × M)
	if wantGrad {
		gD = mat.NewDense(dim, dim, nil)
		gAF = mat.NewDense(dim, M, nil)
	}
	AS := mat.NewDense(dim, M, nil)
	for _, b := range mi.blocks {
		// AS = A Σ_c (A block-diagonal), C = D + AS Aᵀ.
		for k := 0; k < m; k++ {
			AS.Slice(k*nB, (k+1)*nB, 0, M).(*mat.Dense).Mul(A[k], b.sigma.Slice(k*nT, (k+1)*nT, 0, M))
		}
		C := mat.NewSymDense(dim, nil)
		C.CopySym(D)
		for l := 0; l < m; l++ {
			var t mat.Dense
			t.Mul(AS.Slice(0, dim, l*nT, (l+1)*nT), A[l].T())
			for i := 0; i < dim; i++ {
				for j := l * nB; j < (l+1)*nB; j++ {
					if j >= i {
						C.SetSym(i, j, C.At(i, j)+t.At(i, j-l*nB))
					}
				}
			}
		}
		jitter(C)
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
			g.Mul(&inv, AS)
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

// jitter adds a relative jitter to C's diagonal, which keeps C positive
// definite when the noise is tiny and the batch repeats a trusted point.
func jitter(C *mat.SymDense) {
	dim := C.SymmetricDim()
	tr := 0.0
	for i := 0; i < dim; i++ {
		tr += C.At(i, i)
	}
	for i := 0; i < dim; i++ {
		C.SetSym(i, i, C.At(i, i)+1e-10*tr/float64(dim)+1e-12)
	}
}
