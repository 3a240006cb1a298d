package sdk

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

func condSpace() Space {
	return Space{
		{Name: "opt", Kind: Categorical, Choices: []string{"sgd", "adam", "rmsprop"}},
		{Name: "momentum", Kind: Float, Low: 0, High: 0.99, ActiveIf: &Condition{Parent: "opt", Values: []string{"sgd"}}},
		{Name: "nesterov", Kind: Categorical, Choices: []string{"no", "yes"}, ActiveIf: &Condition{Parent: "opt", Values: []string{"sgd"}}},
		{Name: "dampening", Kind: Float, Low: 0, High: 1, ActiveIf: &Condition{Parent: "nesterov", Values: []string{"no"}}},
		{Name: "beta2", Kind: LogFloat, Low: 1e-3, High: 1, ActiveIf: &Condition{Parent: "opt", Values: []string{"adam", "rmsprop"}}},
	}
}

// A condition's parent must exist, come first (so no cycle can form), be
// categorical, and the values must be some of its choices.
func TestConditionValidate(t *testing.T) {
	if err := condSpace().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(s Space){
		"no parameter":            func(s Space) { s[1].ActiveIf.Parent = "nope" },
		"declared before":         func(s Space) { s[0], s[1] = s[1], s[0] },
		"must be categorical":     func(s Space) { s[4].ActiveIf = &Condition{Parent: "momentum", Values: []string{"x"}} },
		"not a choice":            func(s Space) { s[1].ActiveIf.Values = []string{"nadam"} },
		"no Values":               func(s Space) { s[1].ActiveIf.Values = nil },
		"given twice":             func(s Space) { s[4].ActiveIf.Values = []string{"adam", "adam"} },
		"cannot depend on itself": func(s Space) { s[2].ActiveIf.Parent = "nesterov" },
	}
	for want, mutate := range bad {
		s := condSpace()
		for i := range s {
			if s[i].ActiveIf != nil {
				c := *s[i].ActiveIf
				c.Values = slices.Clone(c.Values)
				s[i].ActiveIf = &c
			}
		}
		mutate(s)
		if err := s.Validate(); err == nil || !errors.Is(err, ErrBadSpace) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v", want, err)
		}
	}
}

// Active follows the chain of parents: dampening needs nesterov = no,
// which needs opt = sgd; an inactive parent makes its children inactive.
func TestConditionActive(t *testing.T) {
	s, nan := condSpace(), math.NaN()
	for _, c := range []struct {
		x    []float64
		want []bool
	}{
		{[]float64{0, 0.9, 0, 0.1, nan}, []bool{true, true, true, true, false}},
		{[]float64{0, 0.9, 1, nan, nan}, []bool{true, true, true, false, false}},
		{[]float64{1, nan, nan, nan, 0.01}, []bool{true, false, false, false, true}},
		{[]float64{2, 0.5, 0, 0.5, 0.01}, []bool{true, false, false, false, true}}, // values of inactive ones do not matter
	} {
		if got := s.Active(c.x); !slices.Equal(got, c.want) {
			t.Errorf("Active(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	v := Values(Info{Params: s}, []float64{1, nan, nan, nan, 0.01})
	if v.Active("momentum") || !v.Active("beta2") || v.Choice("nesterov") != "" || v.Choice("opt") != "adam" {
		t.Fatal("Named: an inactive parameter must read as inactive (NaN, choice \"\")")
	}
}
