package testfunc

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Multi is a benchmark with several outputs on a box domain [Lower, Upper]
// ⊂ R^Dim in native units: the multi-objective and constrained problems of
// BoTorch (botorch.test_functions.multi_objective and the constrained
// synthetic functions), written here from their published definitions.
// Outputs keep BoTorch's native orientation: objectives are minimized (the
// host negates them) and each constraint output is a slack, feasible where
// it is ≥ 0. Eval returns the objectives first, then the slacks.
//
// A Multi is immutable after construction and safe for concurrent use;
// callers must not modify its slices.
type Multi struct {
	// Name is the registry name ("branincurrin", "dtlz2", ...).
	Name string
	// Dim is the input dimension d.
	Dim int
	// Lower and Upper are the inclusive bounds of the domain (len Dim).
	Lower, Upper []float64
	// Outputs names each output, in Eval's order.
	Outputs []Output
	// RefPoint holds, for a multi-objective problem, one value per
	// objective in native (minimized) units: BoTorch's ref_point, which
	// bounds the hypervolume from above (from below once negated). Nil for
	// a constrained single-objective problem.
	RefPoint []float64
	// MaxHV is the hypervolume that the true Pareto front dominates with
	// respect to RefPoint (the same number in either orientation), as
	// BoTorch states it; NaN when unknown.
	MaxHV float64
	// Optimum is, for a constrained problem, the best feasible objective
	// value (native units, the minimum) and Minimizer a point attaining it;
	// NaN and nil when unknown.
	Optimum   float64
	Minimizer []float64

	f func(x []float64) []float64
}

// Output describes one output of a Multi.
type Output struct {
	Name string
	// Constraint outputs are slacks, feasible where ≥ 0; the others are
	// objectives to minimize.
	Constraint bool
}

// maxMultiDim bounds the dimension of the any-dimension problems (DTLZ2,
// ZDT*), and maxObjectives DTLZ2's number of objectives (sdk.MaxObjectives,
// what a study takes).
const (
	maxMultiDim   = 1000
	maxObjectives = 6
)

// MultiSettings selects a member of a problem family in NewMulti. The zero
// value gives each problem's default.
type MultiSettings struct {
	// Dim is the dimension of DTLZ2 (default 6), ZDT1–3 (default 4),
	// ConstrainedHartmann and ConstrainedHartmannSmooth (3 or 6, default
	// 6); other problems have a fixed dimension and accept only 0 or it.
	Dim int
	// Objectives is DTLZ2's number of objectives M (2 … min(Dim−1, 6),
	// default 2); 0 or the fixed count elsewhere.
	Objectives int
}

type multiEntry struct {
	dim, objectives int // defaults
	anyDim, anyM    bool
	build           func(d, m int) (*Multi, error)
}

var multiRegistry = map[string]multiEntry{
	"branincurrin":              {dim: 2, objectives: 2, build: func(int, int) (*Multi, error) { return braninCurrin(), nil }},
	"dtlz2":                     {dim: 6, objectives: 2, anyDim: true, anyM: true, build: dtlz2},
	"zdt1":                      {dim: 4, objectives: 2, anyDim: true, build: zdt(1)},
	"zdt2":                      {dim: 4, objectives: 2, anyDim: true, build: zdt(2)},
	"zdt3":                      {dim: 4, objectives: 2, anyDim: true, build: zdt(3)},
	"vehiclesafety":             {dim: 5, objectives: 3, build: func(int, int) (*Multi, error) { return vehicleSafety(), nil }},
	"constrainedgramacy":        {dim: 2, objectives: 1, build: func(int, int) (*Multi, error) { return constrainedGramacy(), nil }},
	"constrainedhartmann":       {dim: 6, objectives: 1, anyDim: true, build: constrainedHartmann},
	"constrainedhartmannsmooth": {dim: 6, objectives: 1, anyDim: true, build: constrainedHartmannSmooth},
	"pressurevessel":            {dim: 4, objectives: 1, build: func(int, int) (*Multi, error) { return pressureVessel(), nil }},
	"weldedbeam":                {dim: 4, objectives: 1, build: func(int, int) (*Multi, error) { return weldedBeam(), nil }},
	"tensioncompressionstring":  {dim: 3, objectives: 1, build: func(int, int) (*Multi, error) { return tensionCompressionString(), nil }},
	"speedreducer":              {dim: 7, objectives: 1, build: func(int, int) (*Multi, error) { return speedReducer(), nil }},
}

// MultiNames returns the names NewMulti accepts, sorted.
func MultiNames() []string {
	names := make([]string, 0, len(multiRegistry))
	for n := range multiRegistry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewMulti builds the named several-output problem (see MultiNames) with
// settings s; a setting that does not apply to the problem is an error.
func NewMulti(name string, s MultiSettings) (*Multi, error) {
	e, ok := multiRegistry[name]
	if !ok {
		return nil, fmt.Errorf("unknown several-output problem %q; known: %s", name, strings.Join(MultiNames(), ", "))
	}
	d, m := e.dim, e.objectives
	if s.Dim != 0 {
		if !e.anyDim && s.Dim != d {
			return nil, fmt.Errorf("%s is %d-dimensional; omit dim or set it to %d", name, d, d)
		}
		if s.Dim < 1 || s.Dim > maxMultiDim {
			return nil, fmt.Errorf("%s: dimension %d, want 1 to %d", name, s.Dim, maxMultiDim)
		}
		d = s.Dim
	}
	if s.Objectives != 0 {
		if !e.anyM && s.Objectives != m {
			return nil, fmt.Errorf("%s has %d objective(s); omit objectives or set it to %d", name, m, m)
		}
		m = s.Objectives
	}
	return e.build(d, m)
}

// Objectives returns the number of objective outputs.
func (p *Multi) Objectives() int {
	n := 0
	for _, o := range p.Outputs {
		if !o.Constraint {
			n++
		}
	}
	return n
}

// Eval returns every output at x (native units): objectives, then slacks.
// It fails like Function.Eval on a wrong length, a NaN or a point outside
// the domain.
func (p *Multi) Eval(x []float64) ([]float64, error) {
	fn := Function{Name: p.Name, Dim: p.Dim, Lower: p.Lower, Upper: p.Upper}
	xc, err := fn.check(x)
	if err != nil {
		return nil, err
	}
	return p.f(xc), nil
}

// EvalUnit returns Eval(Lower + u·(Upper − Lower)) for u in [0,1]^Dim.
func (p *Multi) EvalUnit(u []float64) ([]float64, error) {
	if len(u) != p.Dim {
		return nil, fmt.Errorf("%s: point has %d coordinates, want %d", p.Name, len(u), p.Dim)
	}
	x := make([]float64, p.Dim)
	for i, v := range u {
		x[i] = p.Lower[i] + v*(p.Upper[i]-p.Lower[i])
	}
	return p.Eval(x)
}

// Feasible reports whether every slack in the outputs y (Eval's order) is
// ≥ 0.
func (p *Multi) Feasible(y []float64) bool {
	for i, o := range p.Outputs {
		if o.Constraint && !(y[i] >= 0) {
			return false
		}
	}
	return true
}

// objectives returns n objective outputs named f1 … fn.
func objectives(n int) []Output {
	out := make([]Output, n)
	for i := range out {
		out[i] = Output{Name: fmt.Sprintf("f%d", i+1)}
	}
	return out
}

// withSlacks returns the objective "f" followed by n slacks c1 … cn.
func withSlacks(n int) []Output {
	out := []Output{{Name: "f"}}
	for i := 1; i <= n; i++ {
		out = append(out, Output{Name: fmt.Sprintf("c%d", i), Constraint: true})
	}
	return out
}

func unknownOptimum() (float64, []float64) { return math.NaN(), nil }
