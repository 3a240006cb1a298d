package host

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// BenchmarkAsyncRegret compares, on Hartmann-3 (noise-free, maximized)
// with evaluation times drawn from a heavy-tailed log-normal distribution
// (median TESBO_ASYNC_MEDIAN, default 0.5 s, σ = 1: a tenth of the
// evaluations take over 1.8 s, one in a hundred over 5 s), the regret
// reached per evaluation and per wall-clock second of:
//
//   - sync-8: synchronous batches of 8 (each iteration waits for its
//     slowest evaluation);
//   - async-8: 8 evaluation slots in worker mode (RunWorker on SQLite), a
//     new point proposed as soon as a slot is idle, conditioned on the
//     running ones;
//   - sync-auto, async-auto: the same with the batch sized by information
//     gain (Options.AutoBatch, at most 8);
//   - sync-4, sync-1: smaller fixed batches, 4 and 1 slots busy.
//
// Every run has the same budget: 8 initial points + 48 evaluations (an
// auto study run synchronously is stopped after its 56th). Over
// TESBO_ASYNC_SEEDS seeds (default 3) it reports each configuration's
// mean wall time, the mean log10 regret after 16, 32 and 56 evaluations,
// and the mean wall time at which async-8 (and the others) first reach
// the final regret of sync-8 on the same seed. With TESBO_ASYNC_TABLE set
// to a path the table is written there as Markdown. One run takes tens of
// seconds; run it alone:
//
//	go test ./host -run '^$' -bench AsyncRegret -benchtime 1x -timeout 60m
func BenchmarkAsyncRegret(b *testing.B) {
	median := envFloat(b, "TESBO_ASYNC_MEDIAN", 0.5)
	seeds := int(envFloat(b, "TESBO_ASYNC_SEEDS", 3))
	configs := []asyncConfig{
		{name: "sync-8", batch: 8}, {name: "async-8", batch: 8, async: true},
		{name: "sync-auto", batch: 8, auto: true}, {name: "async-auto", batch: 8, auto: true, async: true},
		{name: "sync-4", batch: 4}, {name: "sync-1", batch: 1},
	}
	runs := map[string][]asyncRun{}
	for range b.N {
		for seed := range uint64(seeds) {
			for _, c := range configs {
				r, err := runAsyncConfig(b, c, seed, median)
				if err != nil {
					b.Fatalf("%s seed %d: %v", c.name, seed, err)
				}
				b.Logf("%s seed %d: %d evaluations, %.1f s, final log10 regret %.2f", c.name, seed, len(r.trace), r.wall, log10(r.final()))
				runs[c.name] = append(runs[c.name], r)
			}
		}
	}
	table := asyncTable(configs, runs, median, seeds)
	b.Log("\n" + table)
	for _, c := range configs {
		b.ReportMetric(meanOf(runs[c.name], func(r asyncRun) float64 { return r.wall }), c.name+"-s")
	}
	if p := os.Getenv("TESBO_ASYNC_TABLE"); p != "" {
		if err := os.WriteFile(p, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

type asyncConfig struct {
	name        string
	batch       int
	auto, async bool
}

// asyncRun is one run's best-so-far regret after each evaluation and when
// (seconds since the start) that evaluation finished.
type asyncRun struct {
	trace []float64 // regret after evaluation i+1
	at    []float64 // its finish time
	wall  float64
	iters int
}

func (r asyncRun) final() float64 { return r.trace[len(r.trace)-1] }

// regretAt is the best-so-far regret after n evaluations (the last one if
// fewer).
func (r asyncRun) regretAt(n int) float64 { return r.trace[min(n, len(r.trace))-1] }

// timeTo is when the run first reached regret ≤ target (+Inf if never).
func (r asyncRun) timeTo(target float64) float64 {
	for i, v := range r.trace {
		if v <= target {
			return r.at[i]
		}
	}
	return math.Inf(1)
}

const (
	asyncInit   = 8
	asyncBudget = 56 // evaluations, initial design included
)

func runAsyncConfig(b *testing.B, c asyncConfig, seed uint64, median float64) (asyncRun, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fn := testfunc.Hartmann3()
	obj := &slowObjective{fn: fn, median: median, rng: rand.New(rand.NewPCG(seed, 0x736c6f77)), start: time.Now()}
	iters := (asyncBudget - asyncInit) / c.batch
	o := Options{Acquisition: "tes", Batch: c.batch, AutoBatch: c.auto, Iters: iters, Init: asyncInit, Seed: seed, Grace: -1}
	if c.auto && !c.async {
		o.Iters = asyncBudget // stopped at the budget below
		o.OnTrial = func(Trial) {
			if obj.count() >= asyncBudget {
				cancel()
			}
		}
	}
	run := asyncRun{}
	if c.async {
		db := openTestDBB(b, filepath.Join(b.TempDir(), "a.db"))
		info, _ := obj.Info(ctx)
		o.DB, o.Name = db, "a"
		s, err := NewStudy(ctx, info, o)
		if err != nil {
			return run, err
		}
		s.Close()
		obj.start = time.Now()
		if _, err := RunWorker(ctx, db, "a", obj, WorkerOptions{Parallel: c.batch, Poll: 5 * time.Millisecond}); err != nil {
			return run, err
		}
	} else {
		obj.start = time.Now()
		res, err := Optimize(ctx, obj, o)
		if err != nil && !(c.auto && ctx.Err() != nil) {
			return run, err
		}
		if res != nil {
			run.iters = res.Iterations
		}
	}
	run.wall = time.Since(obj.start).Seconds()
	run.trace, run.at = obj.trace(fn.Optimum)
	if len(run.trace) < asyncBudget {
		return run, fmt.Errorf("%d evaluations, want %d", len(run.trace), asyncBudget)
	}
	run.trace, run.at = run.trace[:asyncBudget], run.at[:asyncBudget]
	return run, nil
}

func openTestDBB(b *testing.B, path string) *store.DB {
	b.Helper()
	db, err := store.Open(path, store.Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// slowObjective evaluates fn (on the unit cube) after sleeping a
// log-normal time with the given median and σ = 1, and records every value
// with its finish time.
type slowObjective struct {
	fn     *testfunc.Function
	median float64
	start  time.Time

	mu     sync.Mutex
	rng    *rand.Rand
	values []float64
	times  []float64
}

func (o *slowObjective) Info(context.Context) (sdk.Info, error) {
	return unitInfo(o.fn.Dim), nil
}

func (o *slowObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	o.mu.Lock()
	d := time.Duration(o.median * math.Exp(o.rng.NormFloat64()) * float64(time.Second))
	o.mu.Unlock()
	select {
	case <-time.After(d):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	v, err := o.fn.EvalUnit(x)
	if err != nil {
		return 0, err
	}
	o.mu.Lock()
	o.values, o.times = append(o.values, v), append(o.times, time.Since(o.start).Seconds())
	o.mu.Unlock()
	return v, nil
}

func (o *slowObjective) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.values)
}

// trace returns the best-so-far regret after each evaluation, in the
// order they finished, and the finish times.
func (o *slowObjective) trace(opt float64) ([]float64, []float64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	best := math.Inf(-1)
	out := make([]float64, len(o.values))
	for i, v := range o.values {
		best = math.Max(best, v)
		out[i] = math.Max(opt-best, 1e-12)
	}
	return out, slices.Clone(o.times)
}

func asyncTable(configs []asyncConfig, runs map[string][]asyncRun, median float64, seeds int) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Hartmann-3 (noise-free), acquisition tes, %d initial points + %d evaluations, evaluation times log-normal with median %.2g s and σ = 1, %d seeds.\n\n",
		asyncInit, asyncBudget-asyncInit, median, seeds)
	sb.WriteString("| configuration | wall s | iterations | log10 regret @16 | @32 | @56 | s to sync-8's final regret | reached |\n|---|---|---|---|---|---|---|---|\n")
	ref := runs["sync-8"]
	for _, c := range configs {
		rs := runs[c.name]
		var times []float64
		reached := 0
		for i, r := range rs {
			if i < len(ref) {
				if t := r.timeTo(ref[i].final()); !math.IsInf(t, 1) {
					times = append(times, t)
					reached++
				}
			}
		}
		iters := "–"
		if !c.async {
			iters = strconv.FormatFloat(meanOf(rs, func(r asyncRun) float64 { return float64(r.iters) }), 'f', 1, 64)
		}
		fmt.Fprintf(&sb, "| %s | %.1f | %s | %.2f | %.2f | %.2f | %s | %d/%d |\n", c.name,
			meanOf(rs, func(r asyncRun) float64 { return r.wall }), iters,
			meanOf(rs, func(r asyncRun) float64 { return log10(r.regretAt(16)) }),
			meanOf(rs, func(r asyncRun) float64 { return log10(r.regretAt(32)) }),
			meanOf(rs, func(r asyncRun) float64 { return log10(r.regretAt(56)) }),
			medianStr(times), reached, len(rs))
	}
	return sb.String()
}

func meanOf(rs []asyncRun, f func(asyncRun) float64) float64 {
	s := 0.0
	for _, r := range rs {
		s += f(r)
	}
	return s / float64(len(rs))
}

func medianStr(xs []float64) string {
	if len(xs) == 0 {
		return "–"
	}
	sort.Float64s(xs)
	return strconv.FormatFloat(xs[len(xs)/2], 'f', 1, 64) + " (median)"
}

func log10(v float64) float64 { return math.Log10(v) }

func envFloat(b *testing.B, name string, def float64) float64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		b.Fatalf("bad %s=%q: want a positive number", name, s)
	}
	return v
}
