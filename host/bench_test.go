package host

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/store"
)

// BenchmarkHostOverhead measures the host's own work per BO iteration (q = 1,
// d = 6) in a stored study holding 1,000 trials: building the data set,
// duplicate checks, committing the proposal, the start and the outcome of
// the evaluation and the iteration record, the worker pool and the
// recommendation's bookkeeping. The GP fit is replaced by a constant
// one-point model, the acquisition is random and the objective returns at
// once, so what remains is the host overhead (target ≤ 5 ms).
//
// The trial count is held near 1,000: the timed iterations run in chunks
// of overheadChunk, each on a fresh copy of the 1,000-trial study (copied
// and reopened with the timer stopped), so the figure is "at 1,000 stored
// trials" whatever b.N is.
func BenchmarkHostOverhead(b *testing.B) {
	for _, durable := range []bool{false, true} {
		name := "sync=NORMAL"
		if durable {
			name = "sync=FULL"
		}
		b.Run(name, func(b *testing.B) { benchOverhead(b, durable, 1000) })
	}
}

// overheadChunk is how many timed iterations run before the study is reset
// to its n trials (so at most n + overheadChunk are stored while timing).
const overheadChunk = 20

func benchOverhead(b *testing.B, durable bool, n int) {
	ctx := context.Background()
	dir := b.TempDir()
	tmpl := filepath.Join(dir, "template.db")
	const d, init = 6, 10
	info := unitInfo(d)
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return x[0] - x[1], nil }}
	x := make([]float64, d)
	g, err := gp.New(newKernel(KernelSE, d), 1e-4, mat.NewDense(1, d, x), []float64{0})
	if err != nil {
		b.Fatal(err)
	}
	constFit := func(_ context.Context, ds *dataset, _ *modelState, _ int) (*fitResult, error) {
		return &fitResult{gp: g, state: &modelState{Kernel: KernelSE, Params: g.Kernel().Params(), Noise: 1e-4, N: ds.n()}}, nil
	}
	open := func(path string, create bool) *store.DB {
		db, err := store.Open(path, store.Options{Create: create, Durable: durable})
		if err != nil {
			b.Fatal(err)
		}
		return db
	}

	// The template: a study with n trials (n − init BO iterations).
	db := open(tmpl, true)
	s, err := NewStudy(ctx, info, Options{DB: wrap(db), Name: "bench", Proposer: randomProposer{}, Batch: 1, Init: init, Iters: n - init})
	if err != nil {
		b.Fatal(err)
	}
	s.testHooks().fit = constFit
	if _, err := s.Run(ctx, obj); err != nil {
		b.Fatal(err)
	}
	if len(s.Trials()) != n {
		b.Fatalf("%d trials stored, want %d", len(s.Trials()), n)
	}
	if err := s.Close(); err != nil { // the copies must not carry its lease
		b.Fatal(err)
	}
	if err := db.Close(); err != nil { // checkpoints: the template is one file
		b.Fatal(err)
	}

	work := filepath.Join(dir, "work.db")
	b.ResetTimer()
	for done := 0; done < b.N; {
		k := min(overheadChunk, b.N-done)
		b.StopTimer()
		copyDB(b, tmpl, work)
		db := open(work, false)
		s, err := OpenStudy(ctx, wrap(db), "bench", Options{Proposer: randomProposer{}, Iters: n - init + k})
		if err != nil {
			b.Fatal(err)
		}
		s.testHooks().fit = constFit
		b.StartTimer()
		if _, err := s.Run(ctx, obj); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if got := len(s.Trials()); got != n+k {
			b.Fatalf("%d trials after the chunk, want %d", got, n+k)
		}
		s.Close()
		db.Close()
		done += k
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/iter")
}

// copyDB replaces dst (and any WAL files it left) by a copy of src.
func copyDB(b *testing.B, src, dst string) {
	b.Helper()
	for _, suf := range []string{"", "-wal", "-shm"} {
		os.Remove(dst + suf)
	}
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
