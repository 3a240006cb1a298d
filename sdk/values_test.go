package sdk

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCategoricalValidate(t *testing.T) {
	ok := Param{Name: "opt", Kind: Categorical, Choices: []string{"sgd", "adam"}}
	if err := (Space{ok}).Validate(); err != nil {
		t.Fatalf("valid categorical: %v", err)
	}
	norm := ok
	norm.High = 1 // the host's normalized copy keeps validating
	if err := (Space{norm}).Validate(); err != nil {
		t.Fatalf("categorical with its index range: %v", err)
	}
	for _, tc := range []struct {
		p    Param
		want string
	}{
		{Param{Name: "opt", Kind: Categorical}, "at least one choice"},
		{Param{Name: "opt", Kind: Categorical, Choices: []string{"a", "b", "a"}}, `duplicate choice "a"`},
		{Param{Name: "opt", Kind: Categorical, Choices: []string{"a", " "}}, "choice 1 is empty"},
		{Param{Name: "opt", Kind: Categorical, Choices: []string{"a", "b"}, Low: 1, High: 3}, "leave Low and High unset"},
		{Param{Name: "opt", Kind: Categorical, Choices: []string{"a", "b"}, High: 5}, "leave Low and High unset"},
		{Param{Name: "opt", Kind: Float, Low: 0, High: 1, Choices: []string{"a"}}, "has no Choices"},
	} {
		err := (Space{tc.p}).Validate()
		if err == nil || !errors.Is(err, ErrBadSpace) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"opt"`) {
			t.Errorf("%+v: got %v, want an ErrBadSpace naming \"opt\" containing %q", tc.p, err, tc.want)
		}
	}
}

func TestCategoricalContainsFormat(t *testing.T) {
	p := Param{Name: "opt", Kind: Categorical, Choices: []string{"sgd", "adam", "rmsprop"}}
	s := Space{p}
	for _, c := range []struct {
		x  float64
		in bool
	}{{0, true}, {2, true}, {1.5, false}, {3, false}, {-1, false}} {
		if s.Contains([]float64{c.x}) != c.in {
			t.Errorf("Contains(%v) = %v", c.x, !c.in)
		}
	}
	if p.Format(1) != "adam" || p.Format(7) != "?" || (Param{Kind: Float}).Format(0.25) != "0.25" {
		t.Error("Format")
	}
	if lo, hi := p.Bounds(); lo != 0 || hi != 2 {
		t.Errorf("Bounds = %v, %v", lo, hi)
	}
	if Categorical.String() != "categorical" {
		t.Error("String")
	}
}

func TestValues(t *testing.T) {
	info := Info{Name: "f", Params: []Param{
		{Name: "lr", Kind: LogFloat, Low: 1e-4, High: 1},
		{Name: "layers", Kind: Int, Low: 1, High: 8},
		{Name: "optimizer", Kind: Categorical, Choices: []string{"sgd", "adam", "rmsprop"}},
	}}
	v := Values(info, []float64{0.01, 3, 1})
	if v.Float("lr") != 0.01 || v.Int("layers") != 3 || v.Choice("optimizer") != "adam" || v.Int("optimizer") != 1 {
		t.Fatalf("Values: %v %v %v", v.Float("lr"), v.Int("layers"), v.Choice("optimizer"))
	}
	for name, f := range map[string]func(){
		`no parameter "nope"`:     func() { v.Float("nope") },
		`"lr" is logfloat`:        func() { v.Choice("lr") },
		"has 3 parameters":        func() { Values(info, []float64{1}) },
		`"optimizer" has index 9`: func() { Values(info, []float64{0.01, 3, 9}).Choice("optimizer") },
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), name) {
					t.Errorf("panic %v, want one containing %q", r, name)
				}
			}()
			f()
		}()
	}
}

func ExampleValues() {
	info := Info{Name: "train", Params: []Param{
		{Name: "lr", Kind: LogFloat, Low: 1e-4, High: 1},
		{Name: "optimizer", Kind: Categorical, Choices: []string{"sgd", "adam"}},
	}}
	v := Values(info, []float64{0.01, 1}) // x as Evaluate receives it
	fmt.Println(v.Float("lr"), v.Choice("optimizer"))
	// Output: 0.01 adam
}
