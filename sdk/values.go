package sdk

import (
	"fmt"
	"math"
)

// Named gives access to a point x of an objective's space by parameter
// name (see Values). It is for readable Evaluate methods:
//
//	v := sdk.Values(info, x)
//	lr, layers := v.Float("lr"), v.Int("layers")
//	if v.Choice("optimizer") == "adam" { ... }
//
// Asking for a name the space does not have, or for a Choice of a parameter
// that is not Categorical, is a programming error and panics with a message
// naming the parameter.
type Named struct {
	params []Param
	index  map[string]int
	x      []float64
}

// Values returns named access to x, a point of info's space (x[i] is the
// value of info.Params[i]). It panics if len(x) differs from info.Dim().
func Values(info Info, x []float64) Named {
	if len(x) != len(info.Params) {
		panic(fmt.Sprintf("sdk.Values: the point has %d coordinates, objective %q has %d parameters", len(x), info.Name, len(info.Params)))
	}
	idx := make(map[string]int, len(info.Params))
	for i, p := range info.Params {
		idx[p.Name] = i
	}
	return Named{params: info.Params, index: idx, x: x}
}

func (v Named) lookup(name string) int {
	i, ok := v.index[name]
	if !ok {
		panic(fmt.Sprintf("sdk.Named: no parameter %q in the space", name))
	}
	return i
}

// Float returns the value of parameter name in native units (the index for
// a Categorical).
func (v Named) Float(name string) float64 { return v.x[v.lookup(name)] }

// Int returns the value of parameter name rounded to the nearest integer
// (for an Int or a Categorical the value is already exact).
func (v Named) Int(name string) int { return int(math.Round(v.x[v.lookup(name)])) }

// Active reports whether parameter name is active at this point: always
// for a parameter without a condition (Param.ActiveIf); for a conditional
// one, whether the host sent a value (an inactive parameter is NaN).
func (v Named) Active(name string) bool { return !math.IsNaN(v.x[v.lookup(name)]) }

// Choice returns the chosen name of the Categorical parameter name, or ""
// when it is inactive (see Active).
func (v Named) Choice(name string) string {
	i := v.lookup(name)
	p := v.params[i]
	if p.Kind != Categorical {
		panic(fmt.Sprintf("sdk.Named.Choice: parameter %q is %v, not categorical", name, p.Kind))
	}
	if math.IsNaN(v.x[i]) {
		return ""
	}
	k := math.Round(v.x[i])
	if !(k >= 0 && k < float64(len(p.Choices))) {
		panic(fmt.Sprintf("sdk.Named.Choice: parameter %q has index %v, outside 0..%d", name, v.x[i], len(p.Choices)-1))
	}
	return p.Choices[int(k)]
}
