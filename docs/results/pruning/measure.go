//go:build ignore

// measure.go compares early stopping with full training on the learning-
// curve suite (package problems/curves): BO with EI (-acq), batch 1 (-batch), for each
// problem and seed, once training every trial to its last epoch and once
// with each pruner. Run from the repository root:
//
//	go run docs/results/pruning/measure.go -seeds 10 > docs/results/pruning/table.md
//
// For each problem, full training's median final regret is the target; a
// method's "epochs to" it is where the median over seeds of its incumbent
// regret, as a function of epochs spent, first reaches the target, and
// "saved" compares that with full training's.
//
// It writes runs.csv (one row per trial of every run) next to the table
// when -csv is given. A run's incumbent is its best complete trial by
// observed (noisy) value; its regret is the noise-free f* − acc(x, 27).
//
// With -botorch DIR (the runs of botorch.sh: BoTorch's qLogEI at full
// training) it adds a table of every method's regret at full training's
// epochs beside qLogEI's final regret.
package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"

	"github.com/tesbo/tesbo/bench"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/curves"
)

type method struct {
	name  string
	iters int // BO iterations (pruned runs get more: they are cheaper)
	prune host.Pruning
}

// point is a run's state after a trial: epochs spent so far and the
// incumbent's regret.
type point struct {
	epochs int
	regret float64
}

func main() {
	seeds := flag.Int("seeds", 10, "seeds per problem and method")
	iters := flag.Int("iters", 30, "BO iterations of full training; pruners get three times as many")
	csvPath := flag.String("csv", "", "write every trial of every run here")
	only := flag.String("methods", "", "comma-separated methods to run besides full (default: all)")
	problemFilter := flag.String("problems", "", "comma-separated problems (default: all six)")
	acqName := flag.String("acq", "ei", "the acquisition of every run")
	capMul := flag.Int("cap", 3, "pruned runs get this many times full training's iterations")
	batch := flag.Int("batch", 1, "points per BO iteration (evaluated in parallel); the iterations are divided by it, rounded up")
	botorchDir := flag.String("botorch", "", "BoTorch's runs of botorch.sh (DIR/<problem>-s<seed>.jsonl), tabulated beside every method")
	flag.Parse()
	methods := []method{
		{"full", *iters, host.Pruning{}},
		{"median", *capMul * *iters, host.Pruning{Rule: host.PrunerMedian, StartupTrials: 5, Model: host.PruneModelLast}},
		{"asha", *capMul * *iters, host.Pruning{Rule: host.PrunerASHA, MinStep: 1, Eta: 3, Model: host.PruneModelLast}},
		{"hyperband", *capMul * *iters, host.Pruning{Rule: host.PrunerHyperband, MinStep: 1, Eta: 3, Model: host.PruneModelLast}},
		// Sensitivity: a later first comparison.
		{"median-w9", *capMul * *iters, host.Pruning{Rule: host.PrunerMedian, StartupTrials: 5, WarmupSteps: 9, Model: host.PruneModelLast}},
		{"asha-r3", *capMul * *iters, host.Pruning{Rule: host.PrunerASHA, MinStep: 3, Eta: 3, Model: host.PruneModelLast}},
		// The GP over (x, epoch) instead of the last-value stand-in.
		{"median-curve", *capMul * *iters, host.Pruning{Rule: host.PrunerMedian, StartupTrials: 5, Model: host.PruneModelCurve}},
		{"asha-curve", *capMul * *iters, host.Pruning{Rule: host.PrunerASHA, MinStep: 1, Eta: 3, Model: host.PruneModelCurve}},
		{"hyperband-curve", *capMul * *iters, host.Pruning{Rule: host.PrunerHyperband, MinStep: 1, Eta: 3, Model: host.PruneModelCurve}},
	}
	if *only != "" {
		keep := strings.Split(*only, ",")
		methods = slices.DeleteFunc(methods, func(m method) bool { return m.name != "full" && !slices.Contains(keep, m.name) })
	}
	var w *csv.Writer
	if *csvPath != "" {
		f, err := os.Create(*csvPath)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		w = csv.NewWriter(f)
		defer w.Flush()
		w.Write([]string{"problem", "method", "seed", "trial", "state", "epochs", "cum_epochs", "regret"})
	}
	start := time.Now()
	fmt.Printf("BO with %s, batch %d, %d seeds; full training %d evaluations after a %s-point design, pruners %d; %d epochs per full run; %d CPU cores (shared).\n\n",
		*acqName, *batch, *seeds, *iters, "2d", *capMul**iters, curves.Steps, runtime.NumCPU())
	fmt.Println("| problem | method | final regret (median) | epochs (median) | regret at full's epochs (median) | epochs to full's final median regret | saved |")
	fmt.Println("|---|---|---|---|---|---|---|")
	var pairs, sides []string
	ats := map[string]map[string][]float64{} // problem → method → regret at full training's epochs, per seed
	problems := curves.Problems()
	if *problemFilter != "" {
		keep := strings.Split(*problemFilter, ",")
		problems = slices.DeleteFunc(problems, func(p *curves.Problem) bool { return !slices.Contains(keep, p.Name) })
	}
	for _, p := range problems {
		runs := map[string][][]point{}
		for _, m := range methods {
			for s := 1; s <= *seeds; s++ {
				runs[m.name] = append(runs[m.name], run(p, m, *acqName, *batch, uint64(s), w))
			}
		}
		ats[p.Name] = report(p.Name, methods, runs)
		pairs = append(pairs, paired(p.Name, ats[p.Name])...)
	}
	if *botorchDir != "" { // read last: BoTorch's runs may finish meanwhile
		for _, p := range problems {
			sides = append(sides, beside(p.Name, methods, ats[p.Name], botorchFinals(*botorchDir, p.Name, *seeds)))
		}
	}
	if len(pairs) > 0 {
		fmt.Println("\nThe curve model against the stand-in, per pruner: median regret at full training's median epochs, and the paired change of its log10 (curve − stand-in, mean ± SE over seeds; seeds better / worse).")
		fmt.Println("\n| problem | pruner | stand-in | curve | paired Δ log10 | better / worse |")
		fmt.Println("|---|---|---|---|---|---|")
		for _, r := range pairs {
			fmt.Println(r)
		}
	}
	if len(sides) > 0 {
		fmt.Println("\nBeside BoTorch's qLogEI at full training (botorch.sh; its 2d + " + strconv.Itoa(*iters) + " full trainings spend full training's epochs): median regret ± bootstrap standard error of the median, at full training's median epochs for tesbo's methods, at the end for qLogEI's.")
		head := "| problem | qLogEI (seeds) |"
		for _, m := range methods {
			head += " " + m.name + " |"
		}
		fmt.Println("\n" + head)
		fmt.Println("|---|---|" + strings.Repeat("---|", len(methods)))
		for _, r := range sides {
			fmt.Println(r)
		}
	}
	fmt.Printf("\n%d runs in %s.\n", len(problems)*len(methods)**seeds, time.Since(start).Round(time.Second))
}

// run is one study; it returns its trajectory, one point per trial.
func run(p *curves.Problem, m method, acqName string, batch int, seed uint64, w *csv.Writer) []point {
	obj, err := curves.New(curves.Prefix + p.Name)
	if err != nil {
		fail(err)
	}
	res, err := host.Optimize(context.Background(), obj, host.Options{
		Acquisition: acqName, Batch: batch, Init: 2 * p.Dim, Iters: (m.iters + batch - 1) / batch, Seed: seed, Pruning: m.prune,
	})
	if err != nil {
		fail(fmt.Errorf("%s %s seed %d: %w", p.Name, m.name, seed, err))
	}
	var out []point
	epochs, best, regret := 0, math.Inf(-1), math.Inf(1)
	for _, t := range res.Trials {
		n := len(t.Intermediates) // the epochs it ran
		if m.prune.Rule == "" {
			n = curves.Steps // without a pruner nothing is reported: every trial trains fully
		}
		epochs += n
		if t.Status == host.Complete && t.Value > best {
			best, regret = t.Value, p.Regret(t.X)
		}
		out = append(out, point{epochs, regret})
		if w != nil {
			w.Write([]string{p.Name, m.name, strconv.FormatUint(seed, 10), strconv.Itoa(t.ID), string(t.Status),
				strconv.Itoa(n), strconv.Itoa(epochs), strconv.FormatFloat(regret, 'g', 6, 64)})
		}
	}
	return out
}

// regretAt is the incumbent's regret once at most epochs were spent.
func regretAt(traj []point, epochs int) float64 {
	r := math.Inf(1)
	for _, q := range traj {
		if q.epochs > epochs {
			break
		}
		r = q.regret
	}
	return r
}

// epochsTo is the fewest epochs E at which the median over runs of the
// incumbent's regret after E epochs is at most target (+Inf if never):
// where the method's median cost-to-regret curve crosses target.
func epochsTo(runs [][]point, target float64) float64 {
	last := 0
	for _, tr := range runs {
		last = max(last, tr[len(tr)-1].epochs)
	}
	for e := 1; e <= last; e++ {
		at := make([]float64, len(runs))
		for i, tr := range runs {
			at[i] = regretAt(tr, e)
		}
		if median(at) <= target {
			return float64(e)
		}
	}
	return math.Inf(1)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// report prints the problem's rows and returns each method's per-seed
// regret at full training's median epochs.
func report(name string, methods []method, runs map[string][][]point) map[string][]float64 {
	ats := map[string][]float64{}
	var finals, fullEpochs []float64
	for _, tr := range runs["full"] {
		finals = append(finals, tr[len(tr)-1].regret)
		fullEpochs = append(fullEpochs, float64(tr[len(tr)-1].epochs))
	}
	target, budget := median(finals), int(median(fullEpochs))
	var fullTo float64
	for _, m := range methods {
		var fin, ep, at []float64
		for _, tr := range runs[m.name] {
			fin = append(fin, tr[len(tr)-1].regret)
			ep = append(ep, float64(tr[len(tr)-1].epochs))
			at = append(at, regretAt(tr, budget))
		}
		ats[m.name] = at
		mt := epochsTo(runs[m.name], target)
		if m.name == "full" {
			fullTo = mt
		}
		saved := "—"
		if m.name != "full" && !math.IsInf(mt, 1) {
			saved = fmt.Sprintf("%.0f %%", 100*(1-mt/fullTo))
		}
		fmt.Printf("| %s | %s | %.3g | %.0f | %.3g | %.0f | %s |\n", name, m.name, median(fin), median(ep), median(at), mt, saved)
	}
	return ats
}

// paired returns the rows comparing each "-curve" method with the same
// pruner's stand-in, seed by seed: log10 regret at full training's
// median epochs, curve minus stand-in, mean ± standard error, and the
// seeds better and worse.
func paired(name string, ats map[string][]float64) []string {
	var rows []string
	for _, base := range []string{"median", "asha", "hyperband"} {
		a, b := ats[base], ats[base+"-curve"]
		if len(a) == 0 || len(a) != len(b) {
			continue
		}
		var d []float64
		better, worse := 0, 0
		for i := range a {
			x := math.Log10(b[i]) - math.Log10(a[i])
			d = append(d, x)
			if x < 0 {
				better++
			} else if x > 0 {
				worse++
			}
		}
		m, se := meanSE(d)
		rows = append(rows, fmt.Sprintf("| %s | %s | %.3g | %.3g | %+.3f ± %.3f | %d / %d |", name, base, median(a), median(b), m, se, better, worse))
	}
	return rows
}

// botorchFinals reads BoTorch's final regrets (best_observed_regret of
// each file's last line, the user's rule) for seeds 1..seeds; a missing
// file is skipped.
func botorchFinals(dir, name string, seeds int) []float64 {
	var v []float64
	for s := 1; s <= seeds; s++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s-s%d.jsonl", name, s)))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		var last struct {
			Regret *float64 `json:"best_observed_regret"`
		}
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Regret == nil {
			fail(fmt.Errorf("BoTorch run %s seed %d: no best_observed_regret on its last line", name, s))
		}
		v = append(v, *last.Regret)
	}
	return v
}

// beside is the problem's row of the table beside BoTorch.
func beside(name string, methods []method, ats map[string][]float64, bt []float64) string {
	cell := func(v []float64) string {
		if len(v) == 0 {
			return "—"
		}
		return fmt.Sprintf("%.3g ± %.2g", median(v), bench.BootstrapMedianSE(v))
	}
	row := fmt.Sprintf("| %s | %s (%d) |", name, cell(bt), len(bt))
	for _, m := range methods {
		row += " " + cell(ats[m.name]) + " |"
	}
	return row
}

// meanSE is the mean of v and its standard error.
func meanSE(v []float64) (float64, float64) {
	m, sd := stat.MeanStdDev(v, nil)
	return m, sd / math.Sqrt(float64(len(v)))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "measure:", err)
	os.Exit(1)
}
