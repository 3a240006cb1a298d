package attack

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/frs"
	"github.com/tesbo/tesbo/plugins/facerec/synth"
)

// benchAttack sets up the default attacker against a random 41-entry
// descriptor gallery (so set-up runs no detection on gallery photos).
func benchAttack(b *testing.B, backend, detect string, sidecars int) *Attack {
	b.Helper()
	requireInstalled(b)
	rng := rand.New(rand.NewPCG(3, 4))
	rows := make([][]float64, 41)
	for i := range rows {
		rows[i] = make([]float64, frs.DescriptorLen)
		for j := range rows[i] {
			rows[i][j] = 0.1 * rng.NormFloat64()
		}
	}
	dir := b.TempDir()
	gal := filepath.Join(dir, "gallery.npy")
	if err := frs.WriteNPY(gal, rows); err != nil {
		b.Fatal(err)
	}
	a, err := newAttack(context.Background(), Config{Gallery: gal, Backend: backend, Detect: detect, Sidecars: sidecars,
		FigureDir: dir, Timeout: 5 * time.Minute}, nil, zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	// Pretend a perfect result exists so that no evaluation is re-checked
	// with detection: the benchmark times synthesis + FRS only.
	a.best = &Outcome{Match: Match{Distance: -1}}
	a.noSave = true
	return a
}

func randomX(rng *rand.Rand) []float64 {
	x := make([]float64, 8)
	for i := range x {
		x[i] = rng.Float64()
	}
	return x
}

// BenchmarkEvaluate is the warm latency of one evaluation (synthesis +
// FRS) with one sidecar: the default landmarks mode on the WASM and the
// pure-JS CPU backends, and full detection per image (ssd, tiny).
func BenchmarkEvaluate(b *testing.B) {
	for _, c := range []struct{ backend, detect string }{
		{"wasm", detectLandmarks}, {"cpu", detectLandmarks}, {"wasm", detectTiny}, {"wasm", detectSSD},
	} {
		b.Run(c.backend+"/"+c.detect, func(b *testing.B) {
			a := benchAttack(b, c.backend, c.detect, 1)
			rng := rand.New(rand.NewPCG(5, 6))
			ctx := context.Background()
			if _, err := a.evaluate(ctx, randomX(rng)); err != nil { // warm-up
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := a.evaluate(ctx, randomX(rng)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSynthesis is the synthesis share of an evaluation on the real
// attacker face.
func BenchmarkSynthesis(b *testing.B) {
	a := benchAttack(b, "wasm", detectLandmarks, 1)
	rng := rand.New(rand.NewPCG(5, 6))
	p, err := synth.FromVector(randomX(rng))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := a.synth.Render(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkThroughput runs batches of 8 concurrent evaluations with N
// sidecars and reports evaluations per second.
func BenchmarkThroughput(b *testing.B) {
	for _, n := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("sidecars=%d", n), func(b *testing.B) {
			a := benchAttack(b, "wasm", detectLandmarks, n)
			rng := rand.New(rand.NewPCG(7, 8))
			ctx := context.Background()
			const batch = 8
			xs := make([][]float64, batch)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				for k := range xs {
					xs[k] = randomX(rng)
				}
				var wg sync.WaitGroup
				for _, x := range xs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if _, err := a.evaluate(ctx, x); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.N*batch)/time.Since(start).Seconds(), "evals/s")
		})
	}
}
