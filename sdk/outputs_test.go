package sdk

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func multiInfo(outs ...Output) Info {
	return Info{Name: "f", Params: []Param{{Name: "x", Low: 0, High: 1}}, Outputs: outs}
}

func TestInfoValidateOutputs(t *testing.T) {
	obj := Output{Name: "a", Goal: Maximize}
	cost := Output{Name: "cost", Goal: Minimize}
	con := Output{Name: "w", Goal: Constraint, Feasible: AtMost, Bound: Bound(2)}
	good := []Info{
		multiInfo(obj),
		multiInfo(obj, cost),
		multiInfo(obj, con),
		func() Info { i := multiInfo(obj, cost, con); i.RefPoint = []float64{0, 10}; return i }(),
	}
	for _, i := range good {
		if err := i.Validate(); err != nil {
			t.Errorf("%+v: %v", i.Outputs, err)
		}
	}
	many := make([]Output, MaxOutputs+1)
	for k := range many {
		many[k] = Output{Name: string(rune('a' + k))}
	}
	sevenObjs := make([]Output, MaxObjectives+1)
	for k := range sevenObjs {
		sevenObjs[k] = Output{Name: string(rune('a' + k)), Goal: Minimize}
	}
	sixAndCons := append(append([]Output(nil), sevenObjs[:MaxObjectives]...), con)
	if err := multiInfo(sixAndCons...).Validate(); err != nil {
		t.Errorf("%d objectives and a constraint: %v", MaxObjectives, err)
	}
	bad := map[string]Info{
		"7 objectives, at most 6": multiInfo(sevenObjs...),
		"duplicate name":          multiInfo(obj, Output{Name: "a", Goal: Minimize}),
		"needs a Bound":           multiInfo(obj, Output{Name: "w", Goal: Constraint, Feasible: AtMost}),
		"Feasible side":           multiInfo(obj, Output{Name: "w", Goal: Constraint, Bound: Bound(1)}),
		"not finite":              multiInfo(obj, Output{Name: "w", Goal: Constraint, Feasible: AtLeast, Bound: Bound(math.NaN())}),
		"no objective":            multiInfo(con),
		"empty name":              multiInfo(Output{Goal: Maximize}),
		"unknown goal":            multiInfo(Output{Name: "a", Goal: 7}),
		"those are a Constraint":  multiInfo(Output{Name: "a", Bound: Bound(1)}),
		"at most 16":              multiInfo(many...),
		"want one per objective":  func() Info { i := multiInfo(obj, cost); i.RefPoint = []float64{1}; return i }(),
		"several objectives; this objective has one": func() Info { i := multiInfo(obj, con); i.RefPoint = []float64{1}; return i }(),
		"is +Inf":             func() Info { i := multiInfo(obj, cost); i.RefPoint = []float64{1, math.Inf(1)}; return i }(),
		"leave Info.Minimize": func() Info { i := multiInfo(obj, cost); i.Minimize = true; return i }(),
		"needs several":       func() Info { i := multiInfo(); i.RefPoint = []float64{1, 2}; return i }(),
	}
	for want, i := range bad {
		err := i.Validate()
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrBadSpace) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v", want, err)
		}
	}
}

func TestOutputSatisfied(t *testing.T) {
	le := Output{Name: "w", Goal: Constraint, Feasible: AtMost, Bound: Bound(2)}
	ge := Output{Name: "w", Goal: Constraint, Feasible: AtLeast, Bound: Bound(2)}
	if !le.Satisfied(2) || le.Satisfied(2.1) || !ge.Satisfied(2) || ge.Satisfied(1.9) || !(Output{Name: "a"}).Satisfied(-1e9) {
		t.Fatal("Satisfied disagrees with the bound")
	}
	i := multiInfo(Output{Name: "a"}, le, Output{Name: "b", Goal: Minimize})
	if got := i.Objectives(); len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Fatalf("Objectives = %v", got)
	}
	if !i.Feasible([]float64{-9, 2, 9}) || i.Feasible([]float64{-9, 2.1, 9}) {
		t.Fatal("Feasible disagrees with the constraint's bound")
	}
}

func TestInfoOutputsRoundTrip(t *testing.T) {
	i := multiInfo(Output{Name: "a"}, Output{Name: "w", Goal: Constraint, Feasible: AtLeast, Bound: Bound(-0.5)}, Output{Name: "c", Goal: Minimize})
	i.RefPoint = []float64{1, 2}
	got := infoFromProto(infoToProto(i))
	if len(got.Outputs) != 3 || got.Outputs[1].Goal != Constraint || got.Outputs[1].Feasible != AtLeast || *got.Outputs[1].Bound != -0.5 ||
		got.Outputs[2].Goal != Minimize || got.Outputs[0].Bound != nil || len(got.RefPoint) != 2 || got.RefPoint[1] != 2 {
		t.Fatalf("round trip: %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckOutputs(t *testing.T) {
	info := Info{Outputs: []Output{{Name: "cost", Goal: Minimize}, {Name: "budget", Goal: Constraint, Feasible: AtMost, Bound: Bound(1)}}}
	for _, c := range []struct {
		values []float64
		want   string // "" for nil
		count  bool   // wraps ErrOutputCount
	}{
		{[]float64{1, 2}, "", false},
		{[]float64{1}, "wrong number of outputs: got 1, the objective declares 2", true},
		{[]float64{1, 2, 3}, "got 3, the objective declares 2", true},
		{[]float64{1, math.Inf(-1)}, `output 1 ("budget") is -Inf`, false},
		{[]float64{math.NaN(), 0}, `output 0 ("cost") is NaN`, false},
	} {
		err := info.CheckOutputs(c.values)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.values, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.Is(err, ErrOutputCount) != c.count {
			t.Errorf("%v: %v, want %q (count %v)", c.values, err, c.want, c.count)
		}
	}
}
