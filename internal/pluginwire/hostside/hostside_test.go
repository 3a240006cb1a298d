package hostside

import (
	"reflect"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

func TestInfoRoundTrip(t *testing.T) {
	opt := -1.5
	in := sdk.Info{Name: "f", Minimize: true, Optimum: &opt, Params: []sdk.Param{
		{Name: "a", Kind: sdk.LogFloat, Low: 1e-3, High: 1}, {Name: "b", Kind: sdk.ParamKind(7), Low: 0, High: 1},
		{Name: "c", Kind: sdk.Categorical, Choices: []string{"x", "y"}},
	}}
	out := InfoFromProto(InfoToProto(in))
	if out.Name != in.Name || !out.Minimize || *out.Optimum != opt || len(out.Params) != 3 ||
		!reflect.DeepEqual(out.Params[0], in.Params[0]) || out.Params[1].Kind != 7 || !reflect.DeepEqual(out.Params[2], in.Params[2]) {
		t.Fatalf("round trip: %+v", out)
	}
	obs := ObservationsToProto([]sdk.Observation{{X: []float64{1, 2}, Value: 3}})
	if obs[0].X[1] != 2 || obs[0].Value != 3 {
		t.Fatalf("observations: %+v", obs)
	}
}
