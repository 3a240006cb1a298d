package gp

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// Local models. For thousands of observations an exact GP costs O(n³) per
// fit and O(q n²) per acquisition evaluation. A local model (TuRBO's trust
// region, Eriksson et al. 2019) instead fits an exact GP to the
// observations inside a box around the incumbent (the observed input with
// the largest y) and searches only that box:
//
//   - Region: the box of L∞ radius r around the incumbent (clipped to
//     [0,1]^d), r the L∞ distance of its m-th nearest observation
//     (counting itself), over the continuous coordinates; categorical
//     coordinates (cats[j] > 0) keep their whole range, and an Int
//     coordinate spans at least IntSpan bins each way (LocalDataInt). The
//     model's data are every observation in the box: the m nearest, plus
//     ties (at most m with Int coordinates).
//   - Coordinates: the box is mapped affinely onto [0,1]^d
//     (Region.ToUnit), so a GP, its sample paths and any acquisition built
//     on the local data work unchanged, and everything they propose lies in
//     the box (Region.FromUnit maps it back).
//
// Because paths, trusted maximizers and the acquisition all come from the
// one local GP, TES stays self-consistent; what is given up is the
// information of the observations outside the box (exactly: its posterior
// is the exact GP's conditioned on the box's observations only, which near
// the box's faces is wider than the exact posterior) and any proposal
// outside the box. With m ≥ n the region is the whole cube and the local
// GP is the exact one.

// Region is an axis-aligned box [Lo, Lo+Width] in the unit cube.
type Region struct {
	Lo, Width []float64
}

// Whole reports whether the region is the whole unit cube (its maps are
// then the identity, bit for bit).
func (r Region) Whole() bool {
	for j := range r.Lo {
		if r.Lo[j] != 0 || r.Width[j] != 1 {
			return false
		}
	}
	return true
}

// ToUnit writes the region coordinates (x − Lo)/Width of x into dst.
func (r Region) ToUnit(dst, x []float64) {
	for j := range x {
		dst[j] = (x[j] - r.Lo[j]) / r.Width[j]
	}
}

// FromUnit writes the unit-cube point Lo + Width·u into dst, clipped to
// [0,1].
func (r Region) FromUnit(dst, u []float64) {
	for j := range u {
		dst[j] = math.Min(1, math.Max(0, r.Lo[j]+r.Width[j]*u[j]))
	}
}

// MinRegionWidth is the smallest width of a local region along a
// continuous coordinate (the box around a lone point, or around points
// sharing a coordinate, is widened to it).
const MinRegionWidth = 1e-3

// IntSpan is how many bins of an Int coordinate a local box reaches each
// way from its centre at least: 1.5, so that the neighbouring integers'
// bins lie inside it and a search in the box can move the integer by one
// (a narrower box would freeze it at the centre's value).
const IntSpan = 1.5

// LocalData selects the local model's data from n observations (X in
// [0,1]^d, y): the region around the incumbent holding its m nearest
// observations (see the package's local models), the rows inside it
// (ascending) and those rows' inputs in region coordinates. cats marks
// categorical coordinates (nil: none): a non-zero entry keeps its
// coordinate's whole range and out of the distance to the incumbent,
// which is also how the host keeps a pinned coordinate whole. With m ≥ n
// it returns the whole cube and every row, X unchanged (copied). It is
// LocalDataInt without Int coordinates.
func LocalData(X *mat.Dense, y []float64, m int, cats []int) (Region, []int, *mat.Dense, error) {
	return LocalDataInt(X, y, m, cats, nil)
}

// LocalDataInt is LocalData where intStep[j] > 0 marks an Int coordinate
// whose values have bins of width intStep[j] in [0,1] (nil: none). Along
// it the box reaches at least IntSpan bins each way, and an observation
// counts as being at distance 0 along it when it lies within that span:
// its L∞ distance to the incumbent is then the smallest radius r whose box
// (half-width r, or IntSpan·intStep[j] if larger) holds it. The rows are
// the observations inside the box, at most m of them: ties at the m-th
// distance (frequent when every coordinate is an Int) are broken by the
// plain L∞ distance, then by index.
func LocalDataInt(X *mat.Dense, y []float64, m int, cats []int, intStep []float64) (Region, []int, *mat.Dense, error) {
	n, d := X.Dims()
	if n != len(y) || n == 0 {
		return Region{}, nil, nil, fmt.Errorf("gp.LocalData: %d inputs and %d outputs: %w", n, len(y), errBadInput)
	}
	if m < 1 || (cats != nil && len(cats) != d) || (intStep != nil && len(intStep) != d) {
		return Region{}, nil, nil, fmt.Errorf("gp.LocalData: m = %d points, %d categories and %d Int steps for dimension %d: %w", m, len(cats), len(intStep), d, errBadInput)
	}
	reg := Region{Lo: make([]float64, d), Width: make([]float64, d)}
	for j := range reg.Width {
		reg.Width[j] = 1
	}
	if m >= n {
		rows := make([]int, n)
		for i := range rows {
			rows[i] = i
		}
		return reg, rows, mat.DenseCopyOf(X), nil
	}
	cont := func(j int) bool { return cats == nil || cats[j] == 0 }
	minHalf := func(j int) float64 {
		if intStep == nil {
			return 0
		}
		return IntSpan * intStep[j]
	}
	inc := X.RawRowView(slices.Index(y, slices.Max(y)))
	dist, plain := make([]float64, n), make([]float64, n)
	for i := range dist {
		row := X.RawRowView(i)
		for j := range row {
			if !cont(j) {
				continue
			}
			a := math.Abs(row[j] - inc[j])
			plain[i] = math.Max(plain[i], a)
			if a > minHalf(j) {
				dist[i] = math.Max(dist[i], a)
			}
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(dist[a], dist[b]); c != 0 {
			return c
		}
		return cmp.Compare(plain[a], plain[b])
	})
	r := math.Max(dist[order[m-1]], MinRegionWidth/2)
	for j := range reg.Lo {
		if cont(j) {
			half := math.Max(r, minHalf(j))
			lo, hi := math.Max(0, inc[j]-half), math.Min(1, inc[j]+half)
			reg.Lo[j], reg.Width[j] = lo, hi-lo
		}
	}
	var rows []int
	for _, i := range order {
		// At most m rows also when the box is wider than the m-th
		// distance (the MinRegionWidth floor, Int spans): a study whose
		// proposals crowd the smallest box would otherwise fit every
		// point in it, the cost the local model exists to cap.
		if dist[i] > r || len(rows) == m {
			break
		}
		rows = append(rows, i)
	}
	slices.Sort(rows)
	U := mat.NewDense(len(rows), d, nil)
	for k, i := range rows {
		reg.ToUnit(U.RawRowView(k), X.RawRowView(i))
	}
	return reg, rows, U, nil
}

// InRegion returns the same posterior as g with its inputs expressed in
// r's coordinates u = (x − Lo)/Width: the inputs are mapped and each
// length-scale ℓ_j becomes ℓ_j/Width_j, so that k'(u, v) = k(x, y) and every
// mean, variance and sample path agrees with g's at corresponding points.
// The Cholesky factor and α are g's, shared (the kernel matrix is the
// same), so the cost is O(n d). A search over [0,1]^d on the result is a
// search over r on g. Categorical coordinates of a Mixed kernel must keep
// their whole range (Lo 0, Width 1): a category is a bin of [0,1].
func (g *GP) InRegion(r Region) (*GP, error) {
	if len(r.Lo) != g.d || len(r.Width) != g.d {
		return nil, fmt.Errorf("gp.InRegion: region of dimension %d for a GP of dimension %d: %w", len(r.Lo), g.d, errBadInput)
	}
	var cats []int
	if m, ok := g.k.(*Mixed); ok {
		cats = m.Categories()
	}
	p := g.k.Params()
	for j, w := range r.Width {
		if !(w > 0) || math.IsInf(w, 0) || math.IsNaN(r.Lo[j]) || math.IsInf(r.Lo[j], 0) {
			return nil, fmt.Errorf("gp.InRegion: coordinate %d has offset %v and width %v (need a finite offset and a positive finite width): %w", j, r.Lo[j], w, errBadInput)
		}
		if cats != nil && cats[j] > 0 && (r.Lo[j] != 0 || w != 1) {
			return nil, fmt.Errorf("gp.InRegion: categorical coordinate %d must keep its whole range: %w", j, errBadInput)
		}
		p[j] -= math.Log(w)
	}
	k := g.k.WithParams(p)
	if err := checkKernel(k); err != nil {
		return nil, fmt.Errorf("gp.InRegion: %w", err)
	}
	U := mat.NewDense(g.n, g.d, nil)
	for i := 0; i < g.n; i++ {
		r.ToUnit(U.RawRowView(i), g.x.RawRowView(i))
	}
	out := newShell(k, g.noise, U, g.y)
	out.chol, out.alpha, out.lml = g.chol, g.alpha, g.lml
	return out, nil
}

// InUnitCube reports whether every coordinate of u lies in [0,1].
func InUnitCube(u []float64) bool {
	for _, v := range u {
		if !(v >= 0 && v <= 1) {
			return false
		}
	}
	return true
}

// RowsToUnit maps the rows of P (unit cube) into r's coordinates; with
// inside, the rows that fall outside the region are dropped. It returns nil
// when no row is left (or P is nil).
func (r Region) RowsToUnit(P *mat.Dense, inside bool) *mat.Dense {
	if P == nil {
		return nil
	}
	n, d := P.Dims()
	var rows []float64
	u := make([]float64, d)
	for i := 0; i < n; i++ {
		r.ToUnit(u, P.RawRowView(i))
		if !inside || InUnitCube(u) {
			rows = append(rows, u...)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	return mat.NewDense(len(rows)/d, d, rows)
}

// StepsToUnit returns per-coordinate widths of the unit cube (such as an
// Int parameter's bin width, acq.State.IntStep) in r's coordinates: each
// divided by the region's width along it. It returns nil for nil steps.
func (r Region) StepsToUnit(steps []float64) []float64 {
	if steps == nil {
		return nil
	}
	out := make([]float64, len(steps))
	for j, w := range steps {
		out[j] = w / r.Width[j]
	}
	return out
}

// RowsFromUnit returns the rows of U (region coordinates) mapped back into
// the unit cube (FromUnit); nil for a nil U.
func (r Region) RowsFromUnit(U *mat.Dense) *mat.Dense {
	if U == nil {
		return nil
	}
	n, d := U.Dims()
	out := mat.NewDense(n, d, nil)
	for i := 0; i < n; i++ {
		r.FromUnit(out.RawRowView(i), U.RawRowView(i))
	}
	return out
}
