//go:build ignore

// measure.go compares multi-fidelity TES (host.MultiFidelity with the
// default acquisition "tes") with full-fidelity TES on BoTorch's
// AugmentedBranin and AugmentedHartmann (package problems/fidelity), and
// with early stopping (Hyperband, ASHA) and full training on the
// learning-curve suite (package problems/curves), on cost-to-regret
// curves. Run from the repository root:
//
//	GOMAXPROCS=1 nice go run docs/results/multifidelity/measure.go -seeds 10
//
// It is resumable: every finished run is appended to runs.jsonl next to
// this file (problem, method, seed and the trajectory), and a run already
// there is not run again; the tables (table.md) are made from runs.jsonl
// at the end, or alone with -table. Runs are deterministic (one seed per
// run, batch 1).
//
// Cost is in full evaluations: an evaluation stopped at step s of S costs
// c0 + s/S (c0 = -c0, default 0), a full one 1 + c0. A run's recommendation
// follows the user's rule: the complete (full-fidelity) trial with the
// best observed value; its regret is the noise-free f* − f(x) at full
// fidelity. For each problem the target is the baseline's (full-fidelity
// TES on the augmented functions, Hyperband on the curves, or -baseline)
// final median regret; a method's "cost to target" is where the median over seeds of
// its incumbent regret, as a function of cost spent, first reaches it.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/curves"
	"github.com/tesbo/tesbo/problems/fidelity"
	"github.com/tesbo/tesbo/sdk"
)

const dir = "docs/results/multifidelity"

// problem is one benchmark: the objective, its regret and its budget in
// full evaluations (after the initial design).
type problem struct {
	name   string
	suite  string // "augmented" or "curves"
	open   func() sdk.Objective
	regret func(x []float64) float64
	init   int
	budget float64 // cost after which a run stops (design included)
	steps  int
}

// method is one way to run a problem.
type method struct {
	name  string
	suite string
	opts  func(p problem) host.Options
}

// run is a finished run: one point per trial.
type run struct {
	Problem string       `json:"problem"`
	Method  string       `json:"method"`
	Seed    uint64       `json:"seed"`
	Traj    [][2]float64 `json:"traj"` // (cost so far, incumbent regret)
	Seconds float64      `json:"seconds"`
}

var (
	c0            = flag.Float64("c0", 0, "fixed cost of every evaluation, in full evaluations")
	curveBaseline = flag.String("baseline", "hyperband", "the curves' baseline method, whose final median regret is the target; another than hyperband writes table-vs-<baseline>.md")
)

func problems() []problem {
	var out []problem
	for _, p := range fidelity.Problems() {
		d := len(p.Low)
		budget := 30.0
		if d > 2 {
			budget = 60
		}
		out = append(out, problem{name: fidelity.Prefix + p.Name, suite: "augmented", open: func() sdk.Objective { o, _ := fidelity.New(fidelity.Prefix + p.Name); return o },
			regret: p.Regret, init: d + 1, budget: budget, steps: fidelity.Steps})
	}
	for _, p := range curves.Problems() {
		out = append(out, problem{name: curves.Prefix + p.Name, suite: "curves", open: func() sdk.Objective { o, _ := curves.New(curves.Prefix + p.Name); return o },
			regret: p.Regret, init: 2 * p.Dim, budget: 30, steps: curves.Steps})
	}
	return out
}

// base is a method's options on problem p, with iters BO iterations.
func base(p problem, iters int) host.Options {
	return host.Options{Acquisition: "tes", Batch: 1, Init: p.init, Iters: iters}
}

// pruned is a pruner's method: rule (minimum step 1, η = 3) with the
// pruned trials modelled as model says, up to cheapIters iterations.
func pruned(rule, model string) func(problem) host.Options {
	return func(p problem) host.Options {
		o := base(p, cheapIters(p))
		o.Pruning = host.Pruning{Rule: rule, MinStep: 1, Eta: 3, Model: model}
		return o
	}
}

func methods() []method {
	return []method{
		{"tes-full", "augmented", func(p problem) host.Options { return base(p, int(p.budget)-p.init) }},
		{"full", "curves", func(p problem) host.Options { return base(p, int(p.budget)-p.init) }},
		{"hyperband", "curves", pruned(host.PrunerHyperband, host.PruneModelLast)},
		{"asha", "curves", pruned(host.PrunerASHA, host.PruneModelLast)},
		// The pruners with the curve model, the default for a pruned
		// study since 2026-11-29 (docs/results/pruning).
		{"hyperband-curve", "curves", pruned(host.PrunerHyperband, host.PruneModelCurve)},
		{"asha-curve", "curves", pruned(host.PrunerASHA, host.PruneModelCurve)},
		{"mf-tes", "", func(p problem) host.Options {
			o := base(p, cheapIters(p))
			o.MultiFidelity = host.MultiFidelity{Enabled: true, CostFixed: *c0}
			return o
		}},
		// Batches of 4 (the iterations bound as the single point's: a run
		// ends at its budget's cost first).
		{"mf-tes-b4", "", func(p problem) host.Options {
			o := base(p, cheapIters(p))
			o.Batch = 4
			o.MultiFidelity = host.MultiFidelity{Enabled: true, CostFixed: *c0}
			return o
		}},
	}
}

// cheapIters bounds the iterations of a method whose evaluations may
// stop early: three times full training's, as in docs/results/pruning
// (a run ends at the budget's cost or there, whichever comes first).
func cheapIters(p problem) int { return 3 * (int(p.budget) - p.init) }

func main() {
	seeds := flag.Int("seeds", 10, "seeds per problem and method")
	only := flag.String("problems", "", "comma-separated problems to run (default all)")
	onlyM := flag.String("methods", "", "comma-separated methods to run (default all)")
	tableOnly := flag.Bool("table", false, "only write table.md from runs.jsonl")
	extra := flag.String("also", "", "comma-separated further runs files (of this directory) to read, e.g. one a second process wrote with -suffix")
	suffix := flag.String("suffix", "", "write the runs to runs<suffix>.jsonl (so that two processes can measure at once)")
	flag.Parse()
	name := "runs"
	if *c0 != 0 {
		name = fmt.Sprintf("runs-c0-%g", *c0)
	}
	path := filepath.Join(dir, name+*suffix+".jsonl")
	done := load(filepath.Join(dir, name+".jsonl"))
	if *suffix != "" {
		maps.Copy(done, load(path))
	}
	for _, f := range strings.Split(*extra, ",") {
		if f != "" {
			maps.Copy(done, load(filepath.Join(dir, f)))
		}
	}
	if !*tableOnly {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fail(err)
		}
		// Seeds outermost: an interrupted measurement has every problem
		// at the same number of seeds.
		for s := 1; s <= *seeds; s++ {
			for _, p := range problems() {
				if *only != "" && !slices.Contains(strings.Split(*only, ","), p.name) {
					continue
				}
				for _, m := range methods() {
					if (m.suite != "" && m.suite != p.suite) || (*onlyM != "" && !slices.Contains(strings.Split(*onlyM, ","), m.name)) {
						continue
					}
					key := fmt.Sprintf("%s|%s|%d", p.name, m.name, s)
					if _, ok := done[key]; ok {
						continue
					}
					r := runOne(p, m, uint64(s))
					b, _ := json.Marshal(r)
					f.Write(append(b, '\n'))
					done[key] = r
					fmt.Fprintf(os.Stderr, "%s %s seed %d: final regret %.3g at cost %.1f (%.0f s)\n", p.name, m.name, s, r.Traj[len(r.Traj)-1][1], r.Traj[len(r.Traj)-1][0], r.Seconds)
				}
			}
		}
		f.Close()
	}
	writeTable(done, filepath.Join(dir, name+".jsonl"))
}

// runOne runs method m on problem p with seed until its cost reaches the
// problem's budget (or its iterations end: cheapIters).
func runOne(p problem, m method, seed uint64) run {
	o := m.opts(p)
	o.Seed = seed
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	r := run{Problem: p.name, Method: m.name, Seed: seed}
	cost, best, regret := 0.0, math.Inf(-1), math.Inf(1)
	minimize := strings.HasPrefix(p.name, fidelity.Prefix)
	o.OnTrial = func(t host.Trial) {
		mu.Lock()
		defer mu.Unlock()
		steps := p.steps
		if n := len(t.Intermediates); n > 0 {
			steps = t.Intermediates[n-1].Step
		}
		cost += *c0 + float64(steps)/float64(p.steps)
		v := t.Value
		if minimize {
			v = -v
		}
		if t.Status == host.Complete && v > best {
			best, regret = v, p.regret(t.X)
		}
		r.Traj = append(r.Traj, [2]float64{cost, regret})
		if cost >= p.budget*(1+*c0)-1e-9 {
			cancel()
		}
	}
	t0 := time.Now()
	_, err := host.Optimize(ctx, p.open(), o)
	if err != nil && !errors.Is(err, context.Canceled) {
		fail(fmt.Errorf("%s %s seed %d: %w", p.name, m.name, seed, err))
	}
	r.Seconds = time.Since(t0).Seconds()
	return r
}

func load(path string) map[string]run {
	out := map[string]run{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r run
		if json.Unmarshal(sc.Bytes(), &r) == nil && len(r.Traj) > 0 {
			out[fmt.Sprintf("%s|%s|%d", r.Problem, r.Method, r.Seed)] = r
		}
	}
	return out
}

// regretAt is the incumbent's regret once at most c was spent.
func regretAt(traj [][2]float64, c float64) float64 {
	r := math.Inf(1)
	for _, q := range traj {
		if q[0] > c+1e-9 {
			break
		}
		r = q[1]
	}
	return r
}

// costTo is the least cost at which the median over runs of the
// incumbent's regret is at most target (+Inf if never), searched over
// the costs at which any run's incumbent changed.
func costTo(runs []run, target float64) float64 {
	var cs []float64
	for _, r := range runs {
		for _, q := range r.Traj {
			cs = append(cs, q[0])
		}
	}
	slices.Sort(cs)
	for _, c := range cs {
		at := make([]float64, len(runs))
		for i, r := range runs {
			at[i] = regretAt(r.Traj, c)
		}
		if median(at) <= target {
			return c
		}
	}
	return math.Inf(1)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func writeTable(done map[string]run, path string) {
	var b strings.Builder
	fmt.Fprintf(&b, "Runs from %s (fixed cost c0 = %g). Cost in full evaluations; regret of the best complete trial (user's rule), noise-free, at full fidelity; medians over the seeds listed.\n\n", filepath.Base(path), *c0)
	fmt.Fprintln(&b, "| problem | method | seeds | final regret (median) | cost spent (median) | baseline | baseline's target | cost to target (median curve) | ÷ baseline's cost to target | ÷ baseline's cost spent | seconds per run (median) |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, p := range problems() {
		baseline := "tes-full"
		if p.suite == "curves" {
			baseline = *curveBaseline
		}
		byMethod := map[string][]run{}
		for _, r := range done {
			if r.Problem == p.name {
				byMethod[r.Method] = append(byMethod[r.Method], r)
			}
		}
		base := byMethod[baseline]
		if len(base) == 0 {
			continue
		}
		var finals []float64
		for _, r := range base {
			finals = append(finals, r.Traj[len(r.Traj)-1][1])
		}
		target := median(finals)
		baseTo := costTo(base, target)
		var baseSpent []float64
		for _, r := range base {
			baseSpent = append(baseSpent, r.Traj[len(r.Traj)-1][0])
		}
		for _, m := range methods() {
			rs := byMethod[m.name]
			if len(rs) == 0 {
				continue
			}
			var fin, spent, secs []float64
			for _, r := range rs {
				fin = append(fin, r.Traj[len(r.Traj)-1][1])
				spent = append(spent, r.Traj[len(r.Traj)-1][0])
				secs = append(secs, r.Seconds)
			}
			to := costTo(rs, target)
			fmt.Fprintf(&b, "| %s | %s | %d | %.3g | %.1f | %s | %.3g | %.1f | %.2f | %.2f | %.0f |\n", p.name, m.name, len(rs), median(fin), median(spent), baseline, target, to, to/baseTo, to/median(baseSpent), median(secs))
		}
	}
	out := strings.TrimSuffix(strings.Replace(filepath.Base(path), "runs", "table", 1), ".jsonl")
	if *curveBaseline != "hyperband" {
		out += "-vs-" + *curveBaseline
	}
	out = filepath.Join(dir, out+".md")
	if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
		fail(err)
	}
	fmt.Print(b.String())
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "measure:", err)
	os.Exit(1)
}
