package sdk

import (
	"context"
	"slices"
	"testing"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

// bothOutputs declares two outputs and implements both MultiOutput and
// Detailed, the latter without outputs.
type bothOutputs struct{}

func (bothOutputs) Info(context.Context) (Info, error) {
	return Info{Name: "both", Params: []Param{{Name: "x", Low: 0, High: 1}},
		Outputs: []Output{{Name: "a", Goal: Maximize}, {Name: "b", Goal: Minimize}}}, nil
}
func (bothOutputs) Evaluate(context.Context, []float64) (float64, error) { return 0, nil }
func (bothOutputs) EvaluateOutputs(_ context.Context, x []float64) ([]float64, error) {
	return []float64{x[0], 1 - x[0]}, nil
}
func (bothOutputs) EvaluateDetail(context.Context, []float64) (Result, error) {
	return Result{Meta: map[string]string{"k": "v"}}, nil
}

// A plugin's objective that is both MultiOutput and Detailed is evaluated
// through EvaluateOutputs also when the host asks for details (as the
// loader does of every Detailed objective), as an embedded one is: its
// EvaluateDetail fills no outputs, and every evaluation failed.
func TestServerPrefersEvaluateOutputs(t *testing.T) {
	o := &objectiveServer{srv: &server{objectives: map[string]Objective{"both": bothOutputs{}}}}
	resp, err := o.evaluate(context.Background(), &pb.EvaluateRequest{Objective: "both", X: []float64{0.25},
		Mode: pb.EvaluateMode_EVALUATE_MODE_DETAIL})
	if err != nil || !slices.Equal(resp.Outputs, []float64{0.25, 0.75}) {
		t.Fatalf("evaluate: %v, %v; want the outputs [0.25 0.75] of EvaluateOutputs", resp, err)
	}
}

// Invalid UTF-8 in an evaluation's metadata is replaced, not sent: gRPC
// refuses to marshal it and the whole evaluation failed with an error
// naming no key.
func TestValidUTF8Meta(t *testing.T) {
	m := map[string]string{"ok": "fine", "bad\xff": "v\xfe"}
	got := validUTF8(m)
	if got["ok"] != "fine" || got["bad\uFFFD"] != "v\uFFFD" || len(got) != 2 || m["bad\xff"] != "v\xfe" {
		t.Fatalf("validUTF8 = %q (input now %q)", got, m)
	}
}

// countingBoth is bothOutputs counting its Info calls.
type countingBoth struct {
	bothOutputs
	infos *int
}

func (c countingBoth) Info(ctx context.Context) (Info, error) {
	*c.infos++
	return c.bothOutputs.Info(ctx)
}

// Choosing EvaluateOutputs costs no Info call per evaluation: the server
// goes by the last Info it served.
func TestServerOutputsFromServedInfo(t *testing.T) {
	n := 0
	o := &objectiveServer{srv: &server{objectives: map[string]Objective{"both": countingBoth{infos: &n}}}}
	ctx := context.Background()
	if _, err := o.Info(ctx, &pb.InfoRequest{Objective: "both"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := o.evaluate(ctx, &pb.EvaluateRequest{Objective: "both", X: []float64{0.5}, Mode: pb.EvaluateMode_EVALUATE_MODE_DETAIL}); err != nil {
			t.Fatal(err)
		}
	}
	if n != 1 {
		t.Fatalf("%d Info calls for one Info request and 3 evaluations, want 1", n)
	}
}
