package host

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// neighbourErr is what a plugin host reports for an evaluation stopped
// because another evaluation took the shared process down.
type neighbourErr struct{}

func (neighbourErr) Error() string        { return "killed with a neighbour" }
func (neighbourErr) NeighbourFault() bool { return true }

// Evaluations stopped by a neighbour's fault are re-run without counting
// as attempts (so with no retries a healthy evaluation still completes),
// but at most maxNeighbourReruns times (so a process that always dies
// cannot keep a trial running).
func TestNeighbourFaultRerun(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults int64 // neighbour faults per trial before it succeeds
		want   Status
	}{
		{"re-run completes", 2, Complete},
		{"bounded", maxNeighbourReruns + 1, Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := map[float64]int64{}
			obj := funcObjective{info: unitInfo(1), f: func(ctx context.Context, x []float64) (float64, error) {
				mu.Lock()
				defer mu.Unlock()
				calls[x[0]]++
				if calls[x[0]] <= tc.faults {
					return 0, fmt.Errorf("plugin: %w", neighbourErr{})
				}
				return x[0], nil
			}}
			res, err := Optimize(context.Background(), obj, Options{Proposer: randomProposer{}, Batch: 1, Iters: 1, Init: 2, Retries: 0})
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range res.Trials {
				if tr.Status != tc.want || tr.Attempts != 1 {
					t.Fatalf("trial %d: %v after %d attempts (%s), want %v after 1", tr.ID, tr.Status, tr.Attempts, tr.Error, tc.want)
				}
				if n := calls[tr.X[0]]; n != min(tc.faults+1, maxNeighbourReruns+1) {
					t.Fatalf("trial %d evaluated %d times", tr.ID, n)
				}
			}
		})
	}
}
