package loader

import (
	"context"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

var xstar6 = []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}

func quietOptions() Options {
	l := zerolog.Nop()
	return Options{Logger: &l}
}

// reportMedian adds the median latency of the timed calls as a metric.
func reportMedian(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds())/1e3, "median-µs")
}

// evalBench measures Evaluate round trips of one objective.
func evalBench(b *testing.B, dir, name string, x []float64) {
	r := open(b, dir, quietOptions())
	ctx := context.Background()
	o, err := r.Objective(ctx, name)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := o.Evaluate(ctx, x); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := o.Evaluate(ctx, x); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportMedian(b, lat)
}

// BenchmarkGoPluginEvaluate is one Evaluate through go-plugin: gRPC over a
// Unix socket with mutual TLS, to a compiled plugin process.
func BenchmarkGoPluginEvaluate(b *testing.B) {
	evalBench(b, pluginsDir(b, []string{"objective"}, nil), "objective", []float64{0.5, 0.5})
}

// BenchmarkGoPluginEvaluate8 runs 8 concurrent callers against one plugin
// process and reports the throughput.
func BenchmarkGoPluginEvaluate8(b *testing.B) {
	r := open(b, pluginsDir(b, []string{"objective"}, nil), quietOptions())
	ctx := context.Background()
	o, err := r.Objective(ctx, "objective")
	if err != nil {
		b.Fatal(err)
	}
	var calls atomic.Int64
	b.SetParallelism(max(1, 8/runtimeProcs()))
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		x := []float64{0.5, 0.5}
		for pb.Next() {
			if _, err := o.Evaluate(ctx, x); err != nil {
				b.Error(err)
				return
			}
			calls.Add(1)
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(calls.Load())/time.Since(start).Seconds(), "calls/s")
}

// BenchmarkScriptEvaluateHartmann6 is one Evaluate of the Hartmann-6
// script through the script runner child process (go-plugin round trip
// plus interpretation).
func BenchmarkScriptEvaluateHartmann6(b *testing.B) {
	dir := pluginsDir(b, nil, map[string]string{"hartmann6.go": "../../examples/scripts/hartmann6.go"})
	evalBench(b, dir, "hartmann6", xstar6)
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
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := s.Evaluate(ctx, xstar6); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportMedian(b, lat)
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
	if _, err := f.Score(ctx, batch); err != nil {
		b.Fatal(err)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := f.Score(ctx, batch); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportMedian(b, lat)
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
