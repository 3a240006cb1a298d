package tradeoff

import (
	"context"
	"math"
	"testing"
)

// The script runs interpreted in the host (cmd/tesbo-host's e2e tests);
// this checks its declaration and values compiled.
func TestTradeoff(t *testing.T) {
	if err := Info().Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := EvaluateOutputs(context.Background(), []float64{0.2, 0.5})
	if err != nil || len(out) != 3 || out[0] != 0 || math.Abs(out[1]-0.36) > 1e-15 || out[2] != 0.7 {
		t.Fatalf("EvaluateOutputs(0.2, 0.5) = %v, %v", out, err)
	}
}
