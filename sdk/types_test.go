package sdk

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

func TestSpaceValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		space Space
		frag  string // "" means valid
	}{
		{"ok", Space{{Name: "a", Low: 0, High: 1}, {Name: "b", Kind: Int, Low: 1, High: 8}, {Name: "c", Kind: LogFloat, Low: 1e-5, High: 1}}, ""},
		{"empty", Space{}, "no parameters"},
		{"nil", nil, "no parameters"},
		{"equal bounds", Space{{Name: "a", Low: 1, High: 1}}, "Low 1 must be less than High 1"},
		{"reversed", Space{{Name: "a", Low: 2, High: 1}}, "Low 2 must be less than High 1"},
		{"unknown kind", Space{{Name: "a", Kind: ParamKind(9), Low: 0, High: 1}}, "unknown kind 9"},
		{"negative kind", Space{{Name: "a", Kind: ParamKind(-1), Low: 0, High: 1}}, "unknown kind -1"},
		{"log zero", Space{{Name: "lr", Kind: LogFloat, Low: 0, High: 1}}, "LogFloat needs Low > 0"},
		{"log negative", Space{{Name: "lr", Kind: LogFloat, Low: -1, High: 1}}, "LogFloat needs Low > 0"},
		{"log subnormal", Space{{Name: "lr", Kind: LogFloat, Low: 5e-324, High: 1}}, "LogFloat needs Low ≥ 2.2250738585072014e-308"},
		{"nan", Space{{Name: "a", Low: math.NaN(), High: 1}}, "must be finite"},
		{"inf", Space{{Name: "a", Low: 0, High: math.Inf(1)}}, "must be finite"},
		{"too wide", Space{{Name: "a", Low: -1e308, High: 1e308}}, "wider than a float64 holds"},
		{"no integer", Space{{Name: "n", Kind: Int, Low: 0.2, High: 0.8}}, "no integer"},
		{"empty name", Space{{Name: " ", Low: 0, High: 1}}, "empty name"},
		{"duplicate", Space{{Name: "a", Low: 0, High: 1}, {Name: "a", Low: 0, High: 2}}, "duplicate name"},
	} {
		err := tc.space.Validate()
		if tc.frag == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrBadSpace) || !strings.Contains(err.Error(), tc.frag) {
			t.Errorf("%s: err = %v, want ErrBadSpace mentioning %q", tc.name, err, tc.frag)
		}
	}
}

func TestInfoValidate(t *testing.T) {
	nan := math.NaN()
	info := Info{Name: "f", Params: []Param{{Name: "x", Low: 0, High: 1}}, Optimum: &nan}
	if err := info.Validate(); !errors.Is(err, ErrBadSpace) || !strings.Contains(err.Error(), "optimum") {
		t.Fatalf("NaN optimum: %v", err)
	}
	info.Optimum = nil
	if err := info.Validate(); err != nil || info.Dim() != 1 {
		t.Fatalf("valid info: %v", err)
	}
	for _, n := range []int{-1, MaxInitialDesign + 1} {
		info.InitialDesign = n
		if err := info.Validate(); !errors.Is(err, ErrBadSpace) || !strings.Contains(err.Error(), "initial design") {
			t.Fatalf("initial design %d: %v", n, err)
		}
	}
	info.InitialDesign = MaxInitialDesign
	if err := info.Validate(); err != nil {
		t.Fatalf("initial design %d: %v", MaxInitialDesign, err)
	}
	info.InitialDesign = 0
	info.Params = nil
	if err := info.Validate(); err == nil || !strings.Contains(err.Error(), `objective "f"`) {
		t.Fatalf("empty info: %v", err)
	}
}

func TestSpaceContains(t *testing.T) {
	s := Space{{Name: "a", Low: 0, High: 1}, {Name: "b", Kind: Int, Low: -3, High: 3}}
	for _, tc := range []struct {
		x    []float64
		want bool
	}{
		{[]float64{0, -3}, true},
		{[]float64{1, 3}, true},
		{[]float64{1.01, 0}, false},
		{[]float64{0.5}, false},
		{[]float64{math.NaN(), 0}, false},
	} {
		if got := s.Contains(tc.x); got != tc.want {
			t.Errorf("Contains(%v) = %v", tc.x, got)
		}
	}
}

func TestParamKindString(t *testing.T) {
	if Float.String() != "float" || Int.String() != "int" || LogFloat.String() != "logfloat" || ParamKind(5).String() != "ParamKind(5)" {
		t.Fatal("ParamKind.String")
	}
}

func TestProtoRoundTrip(t *testing.T) {
	opt := -1.5
	in := Info{Name: "f", Minimize: true, Optimum: &opt, Params: []Param{
		{Name: "a", Kind: LogFloat, Low: 1e-3, High: 1}, {Name: "b", Kind: ParamKind(7), Low: 0, High: 1},
		{Name: "c", Kind: Categorical, Choices: []string{"x", "y"}},
	}}
	out := infoFromProto(infoToProto(in))
	if out.Name != in.Name || !out.Minimize || *out.Optimum != opt || len(out.Params) != 3 ||
		!reflect.DeepEqual(out.Params[0], in.Params[0]) || out.Params[1].Kind != 7 || !reflect.DeepEqual(out.Params[2], in.Params[2]) {
		t.Fatalf("round trip: %+v", out)
	}
	obs := []*pb.Observation{{X: []float64{1, 2}, Value: 3}}
	if got := observationsFromProto(obs); got[0].X[1] != 2 || got[0].Value != 3 {
		t.Fatalf("observations: %+v", got)
	}
}
