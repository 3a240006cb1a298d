package host

import (
	"context"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/store"
)

// BenchmarkHostOverhead measures the host's own work per BO iteration (q = 1,
// d = 6) in a stored study that already holds 1,000 trials: building the
// data set, duplicate checks, committing the proposal, the start and the
// outcome of the evaluation and the iteration record, the worker pool and
// the recommendation's bookkeeping. The GP fit is replaced by a constant
// one-point model, the acquisition is random and the objective returns
// at once, so what remains is the host overhead (target ≤ 5 ms).
func BenchmarkHostOverhead(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := "sync=NORMAL"
		if durable {
			name = "sync=FULL"
		}
		b.Run(name, func(b *testing.B) { benchOverhead(b, durable, 1000) })
	}
}

func benchOverhead(b *testing.B, durable bool, n int) {
	ctx := context.Background()
	db, err := store.Open(filepath.Join(b.TempDir(), "bench.db"), store.Options{Create: true, Durable: durable})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	const d = 6
	info := unitInfo(d)
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return x[0] - x[1], nil }}
	s, err := NewStudy(ctx, info, Options{DB: db, Name: "bench", Proposer: randomProposer{}, Batch: 1, Init: 10, Iters: n - 10})
	if err != nil {
		b.Fatal(err)
	}
	x := make([]float64, d)
	g, err := gp.New(newKernel(KernelSE, d), 1e-4, mat.NewDense(1, d, x), []float64{0})
	if err != nil {
		b.Fatal(err)
	}
	s.fitHook = func(ds *dataset, _ *modelState, _ int) (*fitResult, error) {
		return &fitResult{gp: g, state: &modelState{Kernel: KernelSE, Params: g.Kernel().Params(), Noise: 1e-4, N: ds.n()}}, nil
	}
	if _, err := s.Run(ctx, obj); err != nil {
		b.Fatal(err)
	}
	if len(s.Trials()) != n {
		b.Fatalf("%d trials stored, want %d", len(s.Trials()), n)
	}
	b.ResetTimer()
	s.opts.Iters += b.N
	if _, err := s.Run(ctx, obj); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/iter")
}
