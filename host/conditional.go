package host

import (
	"math"
	"slices"

	"github.com/tesbo/tesbo/sdk"
)

// Conditional spaces (sdk.Param.ActiveIf): a parameter active only when a
// categorical parent takes given choices.
//
// In native units an inactive parameter is NaN: it is what Evaluate
// receives (so an inactive value never reaches the objective), what a
// trial stores, and what the trials output shows as empty. In the unit
// cube the GP works in, an inactive coordinate sits at a fixed default,
// the centre of its range (0.5, or the centre of the middle bin of an Int
// or a Categorical): every point is canonical, fully described by its
// active coordinates, so a value an inactive parameter never had cannot
// change the model, and two points that differ only there are the same
// point (one is nudged away as a duplicate). This is the imputation of a
// fixed value for inactive parameters that Lévesque, Durand, Gagné &
// Sabourin (IJCNN 2017) found competitive with dedicated kernels; the
// relatives are Swersky et al.'s arc kernel (2014), which embeds inactive
// coordinates at a fixed point of a cylinder, and Jenatton et al.'s
// tree-structured GPs (ICML 2017). Between two points of the same branch
// the inactive coordinates coincide and drop out of the kernel; between
// branches the parent's own categorical coordinate (gp.Mixed's overlap
// term) already separates them, and the defaults add a fixed distance.
// The acquisition optimizer scores canonical points only
// (acq.State.Canonical), and TES's trust region keeps the conditional
// coordinates whole (acq.State.Conditional; tes/region.go says why). A
// space without conditions is unchanged.

// conditions are a Space's parameter conditions.
type conditions struct {
	parent  []int     // per coordinate: the parent's coordinate, or -1
	allowed [][]bool  // per coordinate with a parent: per parent choice, active
	def     []float64 // per coordinate: the unit-cube default when inactive
}

// newConditions returns the conditions of a valid space, nil when it has
// none.
func newConditions(params []sdk.Param, n []float64) *conditions {
	if !sdk.Space(params).Conditional() {
		return nil
	}
	c := &conditions{parent: make([]int, len(params)), allowed: make([][]bool, len(params)), def: make([]float64, len(params))}
	for i, p := range params {
		c.def[i] = 0.5
		if k := n[i]; k > 0 { // Int or Categorical: the middle bin's centre
			c.def[i] = (math.Floor(0.5*k) + 0.5) / k
		}
		c.parent[i] = -1
		if p.ActiveIf == nil {
			continue
		}
		j := slices.IndexFunc(params[:i], func(q sdk.Param) bool { return q.Name == p.ActiveIf.Parent })
		c.parent[i] = j
		c.allowed[i] = make([]bool, len(params[j].Choices))
		for k, name := range params[j].Choices {
			c.allowed[i][k] = slices.Contains(p.ActiveIf.Values, name)
		}
	}
	return c
}

// activeUnit reports which parameters are active at the unit-cube point u
// (a parent's choice is its bin).
func (s *Space) activeUnit(u []float64) []bool {
	act := make([]bool, len(s.params))
	for i, j := range s.cond.parent {
		if j < 0 {
			act[i] = true
			continue
		}
		if act[j] {
			k := min(int(math.Floor(clamp01(u[j])*s.n[j])), int(s.n[j])-1)
			act[i] = s.cond.allowed[i][k]
		}
	}
	return act
}

// canonical sets the inactive coordinates of the unit-cube point u to
// their defaults, in place, and returns which are inactive (nil when all
// are active or the space has no conditions). u may carry coordinates
// after the space's (a multi-fidelity study's t): they are left as they
// are, and are never inactive.
func (s *Space) canonical(u []float64) []bool {
	if s.cond == nil {
		return nil
	}
	act := s.activeUnit(u)
	var off []bool
	for i, a := range act {
		if !a {
			if off == nil {
				off = make([]bool, len(u))
			}
			off[i], u[i] = true, s.cond.def[i]
		}
	}
	return off
}

// activeOnly returns a copy of the native point x with its inactive
// parameters NaN (x itself, copied, without conditions).
func (s *Space) activeOnly(x []float64) []float64 {
	out := slices.Clone(x)
	if s.cond == nil {
		return out
	}
	for i, a := range sdk.Space(s.params).Active(x) {
		if !a {
			out[i] = math.NaN()
		}
	}
	return out
}

// conditionalCoords is acq.State.Conditional: which coordinates have a
// condition, nil without conditions.
func (s *Space) conditionalCoords() []bool {
	if s.cond == nil {
		return nil
	}
	out := make([]bool, len(s.cond.parent))
	for i, j := range s.cond.parent {
		out[i] = j >= 0
	}
	return out
}

// canonicalFunc is canonical for acq.State.Canonical, nil without
// conditions.
func (s *Space) canonicalFunc() func([]float64) []bool {
	if s.cond == nil {
		return nil
	}
	return s.canonical
}
