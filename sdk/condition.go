package sdk

import (
	"fmt"
	"math"
	"slices"
)

// Condition makes a parameter conditional (Param.ActiveIf): the parameter
// is active — it exists, and the objective uses it — only when the
// Categorical parameter Parent is active and takes one of Values (choice
// names). Momentum, say, only for SGD:
//
//	{Name: "optimizer", Kind: sdk.Categorical, Choices: []string{"sgd", "adam"}},
//	{Name: "momentum", Kind: sdk.Float, Low: 0, High: 0.99,
//		ActiveIf: &sdk.Condition{Parent: "optimizer", Values: []string{"sgd"}}},
//
// The parent must be declared before the parameter (so conditions form a
// forest: no cycles), be Categorical, and Values must be some of its
// choices. Evaluate receives NaN for an inactive parameter (Named.Active
// says whether one is active); a space without conditions is unchanged.
type Condition struct {
	Parent string
	Values []string
}

// checkCondition validates the condition of parameter i (declared after
// its parent, which is categorical and has the values as choices).
func (s Space) checkCondition(i int) error {
	c := s[i].ActiveIf
	if c == nil {
		return nil
	}
	j := slices.IndexFunc(s[:i], func(p Param) bool { return p.Name == c.Parent })
	switch {
	case c.Parent == s[i].Name:
		return fmt.Errorf("ActiveIf: a parameter cannot depend on itself")
	case j < 0 && slices.ContainsFunc(s, func(p Param) bool { return p.Name == c.Parent }):
		return fmt.Errorf("ActiveIf: parent %s must be declared before the parameters that depend on it", quoteName(c.Parent))
	case j < 0:
		return fmt.Errorf("ActiveIf: no parameter %s to depend on", quoteName(c.Parent))
	case s[j].Kind != Categorical:
		return fmt.Errorf("ActiveIf: parent %s is %v; a condition's parent must be categorical", quoteName(c.Parent), s[j].Kind)
	case len(c.Values) == 0:
		return fmt.Errorf("ActiveIf: no Values (the parameter would never be active)")
	}
	for k, v := range c.Values {
		if !slices.Contains(s[j].Choices, v) {
			return fmt.Errorf("ActiveIf: %s is not a choice of %s %v", quoteName(v), quoteName(c.Parent), s[j].Choices)
		}
		if slices.Contains(c.Values[:k], v) {
			return fmt.Errorf("ActiveIf: value %s given twice", quoteName(v))
		}
	}
	return nil
}

// Conditional reports whether any parameter of the space has a condition.
func (s Space) Conditional() bool {
	return slices.ContainsFunc(s, func(p Param) bool { return p.ActiveIf != nil })
}

// Active reports, for the point x of the space (native units, x[i] the
// value of s[i]), which parameters are active: a parameter without a
// condition always is; one with a condition is when its parent is active
// and x holds one of the condition's choices there. The space must be
// valid (Validate), so that parents come first.
func (s Space) Active(x []float64) []bool {
	act := make([]bool, len(s))
	for i, p := range s {
		c := p.ActiveIf
		if c == nil {
			act[i] = true
			continue
		}
		j := slices.IndexFunc(s[:i], func(q Param) bool { return q.Name == c.Parent })
		if j < 0 || !act[j] || j >= len(x) {
			continue
		}
		k := x[j]
		if k >= 0 && k < float64(len(s[j].Choices)) && k == math.Trunc(k) {
			act[i] = slices.Contains(c.Values, s[j].Choices[int(k)])
		}
	}
	return act
}
