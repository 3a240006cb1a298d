package host

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/sdk"
)

// Once an integer space is exhausted, the repeated evaluations are said
// once, as a warning, not once per iteration nor never.
func TestExhaustedSpaceWarnsOnce(t *testing.T) {
	var logs bytes.Buffer
	info := sdk.Info{Name: "four", Params: []sdk.Param{{Name: "a", Kind: sdk.Int, Low: 0, High: 1}, {Name: "b", Kind: sdk.Int, Low: 0, High: 1}}}
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return x[0] - x[1], nil }}
	o := Options{Proposer: randomProposer{}, Batch: 1, Iters: 6, Init: 2, Seed: 1, Logger: zerolog.New(&logs)}
	res, err := Optimize(context.Background(), obj, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 8 {
		t.Fatalf("%d trials, want 8", len(res.Trials))
	}
	if n := strings.Count(logs.String(), "no unused point left among the integer space's 4 points"); n != 1 {
		t.Fatalf("%d warnings about the exhausted space, want 1:\n%s", n, logs.String())
	}
}
