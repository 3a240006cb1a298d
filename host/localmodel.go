package host

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// Models the host fits (Options.Model).
const (
	// ModelAuto is ModelExact below LocalAutoMin completed trials and
	// ModelLocal from there on. The default.
	ModelAuto = "auto"
	// ModelExact fits one exact GP to every completed trial.
	ModelExact = "exact"
	// ModelLocal fits an exact GP to the trials in a trust region around
	// the best trial (the LocalPoints nearest to it, see gp.LocalDataInt;
	// an Int parameter spans at least gp.IntSpan bins each way) and
	// proposes inside that region only.
	ModelLocal = "local"
)

// LocalAutoMin is the number of completed trials from which ModelAuto
// uses the local model: past it an exact iteration's cost grows with n³
// while a local one's stays that of DefaultLocalPoints trials (the
// timings are in docs/results/README.md, "Measurements behind the code").
const LocalAutoMin = 2500

// DefaultLocalPoints is the local model's number of trials when
// Options.LocalPoints is zero.
const DefaultLocalPoints = 500

// MaxLocalPoints bounds Options.LocalPoints.
const MaxLocalPoints = 4000

// ValidModel reports whether name is a known Options.Model.
func ValidModel(name string) bool {
	return name == ModelAuto || name == ModelExact || name == ModelLocal
}

// localPoints returns the local model's size m for n completed trials, or
// 0 when the exact model is used.
func (o Options) localPoints(n int) int {
	if o.Model == ModelExact || (o.Model != ModelLocal && n < LocalAutoMin) {
		return 0
	}
	if o.LocalPoints > 0 {
		return o.LocalPoints
	}
	return DefaultLocalPoints
}

// modelData returns the data the model is fitted to: ds itself for the
// exact model (reg nil), else the local model's trials with their inputs
// in region coordinates (standardization and warping unchanged, so
// native still maps values back) and the region. It is a function of ds
// alone, so a resumed study rebuilds the same view.
func (s *Study) modelData(ds *dataset) (*dataset, *gp.Region) {
	m := s.opts.localPoints(ds.n())
	if m == 0 || ds.n() == 0 || s.space.cond != nil { // conditions: the exact model (conditional.go)
		return ds, nil
	}
	reg, rows, U, err := gp.LocalDataInt(ds.X, ds.y, m, s.wholeRange(), s.space.intSteps())
	if err != nil {
		// Unreachable for a well-formed dataset; keep the exact model.
		s.log.Warn().Err(err).Msg("local model: cannot select the region; fitting all trials")
		return ds, nil
	}
	loc := *ds
	loc.X = U
	loc.y, loc.ids = make([]float64, len(rows)), make([]int, len(rows))
	for k, i := range rows {
		loc.y[k], loc.ids[k] = ds.y[i], ds.ids[i]
	}
	s.log.Debug().Int("trials", ds.n()).Int("local", len(rows)).Floats64("lo", reg.Lo).
		Floats64("width", reg.Width).Msg("local model: trust region around the best trial")
	return &loc, &reg
}

// wholeRange marks the coordinates the local model's region keeps whole,
// in gp.LocalDataInt's categories argument (non-zero: not boxed, and no
// part of the distance to the best trial): the categorical ones, and
// those the study pins (Options.Fixed), so that the region always holds
// the pinned slice whatever trials it selects.
func (s *Study) wholeRange() []int {
	cats := s.space.Categories()
	u := s.pins.unit()
	if u == nil {
		return cats
	}
	out := make([]int, len(u))
	for j, v := range u {
		switch {
		case cats != nil && cats[j] > 0:
			out[j] = cats[j]
		case !math.IsNaN(v):
			out[j] = 1
		}
	}
	return out
}

// labelledInRegion keeps the labelled points (rows of X, ok) inside reg,
// in reg's coordinates: a local model's success classifier is fitted to
// them alone, which bounds its cost with the model's and is all the
// proposals inside the region need. It returns nil when none of them
// failed (or X is nil).
func labelledInRegion(reg *gp.Region, X *mat.Dense, ok []bool) (*mat.Dense, []bool) {
	if X == nil {
		return nil, nil
	}
	n, d := X.Dims()
	var rows [][]float64
	var keep []bool
	failed := false
	for i := 0; i < n; i++ {
		u := make([]float64, d)
		reg.ToUnit(u, X.RawRowView(i))
		if gp.InUnitCube(u) {
			rows = append(rows, u)
			keep = append(keep, ok[i])
			failed = failed || !ok[i]
		}
	}
	if !failed {
		return nil, nil
	}
	return denseRows(rows, d), keep
}

// denseRows stacks rows of length d into a matrix; nil when there are
// none.
func denseRows(rows [][]float64, d int) *mat.Dense {
	if len(rows) == 0 {
		return nil
	}
	out := mat.NewDense(len(rows), d, nil)
	for i, r := range rows {
		out.SetRow(i, r)
	}
	return out
}

// intSteps returns acq.State.IntStep for the model's coordinates: the
// space's Int bin widths, divided by the local region's widths (nil reg:
// the unit cube).
func (s *Study) intSteps(reg *gp.Region) []float64 {
	if reg == nil {
		return s.space.intSteps()
	}
	return reg.StepsToUnit(s.space.intSteps())
}
