package gp

import (
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
//     coordinates (cats[j] > 0) keep their whole range. The model's data
//     are every observation in the box: the m nearest, plus ties.
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

// LocalData selects the local model's data from n observations (X in
// [0,1]^d, y): the region around the incumbent holding its m nearest
// observations (see the package's local models), the rows inside it
// (ascending) and those rows' inputs in region coordinates. cats marks
// categorical coordinates (nil: none). With m ≥ n it returns the whole
// cube and every row, X unchanged (copied).
func LocalData(X *mat.Dense, y []float64, m int, cats []int) (Region, []int, *mat.Dense, error) {
	n, d := X.Dims()
	if n != len(y) || n == 0 {
		return Region{}, nil, nil, fmt.Errorf("gp.LocalData: %d inputs and %d outputs: %w", n, len(y), ErrBadInput)
	}
	if m < 1 || (cats != nil && len(cats) != d) {
		return Region{}, nil, nil, fmt.Errorf("gp.LocalData: m = %d points, %d categories for dimension %d: %w", m, len(cats), d, ErrBadInput)
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
	inc := X.RawRowView(slices.Index(y, slices.Max(y)))
	dist := make([]float64, n)
	for i := range dist {
		row := X.RawRowView(i)
		for j := range row {
			if cont(j) {
				dist[i] = math.Max(dist[i], math.Abs(row[j]-inc[j]))
			}
		}
	}
	sorted := slices.Clone(dist)
	slices.Sort(sorted)
	r := math.Max(sorted[m-1], MinRegionWidth/2)
	for j := range reg.Lo {
		if cont(j) {
			lo, hi := math.Max(0, inc[j]-r), math.Min(1, inc[j]+r)
			reg.Lo[j], reg.Width[j] = lo, hi-lo
		}
	}
	var rows []int
	for i, v := range dist {
		if v <= r {
			rows = append(rows, i)
		}
	}
	U := mat.NewDense(len(rows), d, nil)
	for k, i := range rows {
		reg.ToUnit(U.RawRowView(k), X.RawRowView(i))
	}
	return reg, rows, U, nil
}
