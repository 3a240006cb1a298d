package loader

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var xstar6 = []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}

func quietOptions() Options {
	l := zerolog.Nop()
	return Options{Logger: l}
}

// evalBench measures Evaluate round trips of one objective.
func evalBench(b *testing.B, dir, name string, x []float64) {
	r := open(b, dir, quietOptions())
	ctx := context.Background()
	o, err := r.Objective(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	timeCalls(b, func() error {
		_, err := o.Evaluate(ctx, x)
		return err
	})
}

// timeCalls makes one untimed warm-up call, then b.N timed ones, and
// reports their median latency.
func timeCalls(b *testing.B, call func() error) {
	if err := call(); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := call(); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "median-µs")
}

// BenchmarkGoPluginEvaluate is one Evaluate through go-plugin: gRPC over a
// Unix socket with mutual TLS, to a compiled plugin process.
func BenchmarkGoPluginEvaluate(b *testing.B) {
	evalBench(b, pluginsDir(b, []string{"objective"}, nil), "objective", []float64{0.5, 0.5})
}

// benchCallers is the number of concurrent callers of the throughput
// benchmarks.
const benchCallers = 8

// concurrentBench makes b.N Evaluate calls of one objective from exactly
// benchCallers goroutines, whatever GOMAXPROCS is (RunParallel would start
// a multiple of it), and reports the throughput in calls/s.
func concurrentBench(b *testing.B, dir, name string, x []float64) {
	r := open(b, dir, quietOptions())
	ctx := context.Background()
	o, err := r.Objective(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := o.Evaluate(ctx, x); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	errs := make(chan error, benchCallers)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for range benchCallers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := o.Evaluate(ctx, x); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
}

// BenchmarkGoPluginEvaluate8 runs 8 concurrent callers against one plugin
// process and reports the throughput.
func BenchmarkGoPluginEvaluate8(b *testing.B) {
	concurrentBench(b, pluginsDir(b, []string{"objective"}, nil), "objective", []float64{0.5, 0.5})
}

// BenchmarkScriptEvaluateHartmann6 is one Evaluate of the Hartmann-6
// script through the script runner child process (go-plugin round trip
// plus interpretation).
func BenchmarkScriptEvaluateHartmann6(b *testing.B) {
	dir := pluginsDir(b, nil, map[string]string{"hartmann6.go": "../../examples/scripts/hartmann6.go"})
	evalBench(b, dir, "hartmann6", xstar6)
}

// BenchmarkScriptEvaluate8 runs 8 concurrent callers against the
// Hartmann-6 script's runner process and reports the throughput.
func BenchmarkScriptEvaluate8(b *testing.B) {
	dir := pluginsDir(b, nil, map[string]string{"hartmann6.go": "../../examples/scripts/hartmann6.go"})
	concurrentBench(b, dir, "hartmann6", xstar6)
}

// BenchmarkYaegiHartmann6 is the interpreter alone: one call of the
// compiled script's Evaluate in this process (what the runner does per
// request).
func BenchmarkYaegiHartmann6(b *testing.B) {
	s, err := CompileScript("../../examples/scripts/hartmann6.go", false)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	timeCalls(b, func() error {
		_, err := s.Evaluate(ctx, xstar6)
		return err
	})
}

// BenchmarkScriptScore is one Score of the UCB-logdet acquisition script
// on a batch of 4 in 2-d, including its MeanCov callback to the host.
func BenchmarkScriptScore(b *testing.B) {
	dir := pluginsDir(b, nil, map[string]string{"ucb.go": "../../examples/scripts/ucb_logdet.go"})
	r := open(b, dir, quietOptions())
	ctx := context.Background()
	a, err := r.Acquisition(ctx, "ucb")
	if err != nil {
		b.Fatal(err)
	}
	f := a.Prepare(testPost)
	defer f.Close()
	batch := [][]float64{{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}, {0.7, 0.8}}
	timeCalls(b, func() error {
		_, err := f.Score(ctx, batch)
		return err
	})
}
