package main

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestDefaultEvaluationCost evaluates a few points of the space on the real
// Fashion-MNIST with the default settings and logs the accuracy and the
// time each took. It takes minutes, so it runs only with TESBO_CNN_SLOW=1.
func TestDefaultEvaluationCost(t *testing.T) {
	if os.Getenv("TESBO_CNN_SLOW") != "1" {
		t.Skip("set TESBO_CNN_SLOW=1 to time default evaluations on real Fashion-MNIST (minutes)")
	}
	o := NewObjective()
	ctx := context.Background()
	start := time.Now()
	if err := o.Configure(ctx, map[string]string{"seed": "1"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("loading data: %v", time.Since(start))
	for _, x := range [][]float64{
		{128, 64, 512, 0.25, 1e-5, 0.01, 1e-4}, // the benchmark's mid-size network
		{16, 6, 128, 0, 1e-7, 1e-7, 1e-7},      // smallest network, learning rate too small to learn
		{64, 32, 256, 0.25, 1e-5, 0.03, 1e-4},
		{16, 256, 2048, 0.75, 1e-3, 0.1, 1e-3},  // largest network, diverges
		{128, 256, 2048, 0.5, 1e-5, 0.01, 1e-4}, // largest network, trains
	} {
		start := time.Now()
		r, err := o.EvaluateDetail(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("x=%v: accuracy %.4f in %.1fs, meta %v", x, r.Value, time.Since(start).Seconds(), r.Meta)
	}
}
