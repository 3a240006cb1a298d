// Command modriver runs the several-output acquisitions on the shipped
// several-output problems (synthetic/<name>, testfunc.NewMulti) through the
// host, in process, and prints one JSON line per run: for a
// multi-objective problem the hypervolume of the noise-free outputs of the
// evaluated feasible trials and log10(max HV − HV); for a constrained one
// the best feasible noise-free objective and its regret (both in BoTorch's
// maximized sign convention, as the BoTorch peer script prints them). It is a
// development driver for issue 31, to put tesbo's figures next to
// BoTorch's qLogNEHVI/qNParEGO (mo:NAME) and qLogNEI (con:NAME) runs.
//
//	go run ./docs/results/issue31/modriver -problems branincurrin -acqs tes,nehvi -seeds 2 -iters 10
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/pareto"
	"github.com/tesbo/tesbo/problems/synthetic"
)

type line struct {
	Problem       string   `json:"problem"`
	Acq           string   `json:"acq"`
	Seed          int      `json:"seed"`
	Batch         int      `json:"batch"`
	Evals         int      `json:"evals"`
	HV            *float64 `json:"hypervolume,omitempty"`
	MaxHV         *float64 `json:"max_hv,omitempty"`
	LogHVRegret   *float64 `json:"log_hv_regret,omitempty"`
	BestFeasible  *float64 `json:"best_feasible,omitempty"`
	Regret        *float64 `json:"regret,omitempty"`
	FeasibleShare float64  `json:"feasible_fraction"`
	Seconds       float64  `json:"seconds"`
}

func main() {
	probs := flag.String("problems", "branincurrin", "comma-separated several-output problems (testfunc.MultiNames)")
	acqs := flag.String("acqs", "tes,nehvi", "comma-separated acquisitions")
	seeds := flag.Int("seeds", 1, "seeds 0 … n−1")
	iters := flag.Int("iters", 10, "BO iterations")
	batch := flag.Int("batch", 1, "points per iteration")
	initN := flag.Int("init", 0, "initial design (0: the problem's, 2(d+1))")
	verbose := flag.Bool("v", false, "also print every trial (iteration, x, noise-free outputs) to stderr")
	flag.Parse()
	if *seeds < 1 || *seeds > 100 || *iters < 1 || *iters > 500 || *batch < 1 || *batch > 40 || *initN < 0 || *initN > 1000 {
		fmt.Fprintln(os.Stderr, "modriver: seeds 1–100, iters 1–500, batch 1–40, init 0–1000")
		os.Exit(2)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, p := range strings.Split(*probs, ",") {
		for _, a := range strings.Split(*acqs, ",") {
			for seed := 0; seed < *seeds; seed++ {
				l, err := run(p, a, seed, *iters, *batch, *initN, *verbose)
				if err != nil {
					fmt.Fprintln(os.Stderr, "modriver:", err)
					os.Exit(1)
				}
				_ = enc.Encode(l)
			}
		}
	}
}

func run(name, acqName string, seed, iters, batch, initN int, verbose bool) (*line, error) {
	obj, err := synthetic.NewMulti(name)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := obj.Configure(ctx, map[string]string{"seed": fmt.Sprint(seed)}); err != nil {
		return nil, err
	}
	t0 := time.Now()
	res, err := host.Optimize(ctx, obj, host.Options{Acquisition: acqName, Batch: batch, Iters: iters, Init: initN,
		Seed: uint64(seed), AcqOptions: acq.Options{Optimize: acq.OptimizeSettings{Workers: 1}}})
	if err != nil {
		return nil, fmt.Errorf("%s with %s, seed %d: %w", name, acqName, seed, err)
	}
	p := obj.Problem()
	l := &line{Problem: name, Acq: acqName, Seed: seed, Batch: batch, Evals: res.Evaluations, Seconds: time.Since(t0).Seconds()}
	nObj := p.Objectives()
	var front [][]float64
	best, nFeas := math.Inf(-1), 0
	for _, tr := range res.Trials {
		if tr.Status != host.Complete {
			continue
		}
		f, err := p.Eval(tr.X)
		if err != nil {
			return nil, err
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "%d %.4f %.4g feasible=%v\n", tr.Iteration, tr.U, f, p.Feasible(f))
		}
		if !p.Feasible(f) {
			continue
		}
		nFeas++
		y := make([]float64, nObj)
		for j := range y {
			y[j] = -f[j]
		}
		front = append(front, y)
		best = math.Max(best, y[0])
	}
	l.FeasibleShare = float64(nFeas) / float64(max(res.Evaluations, 1))
	if nObj > 1 {
		ref := make([]float64, nObj)
		for j := range ref {
			ref[j] = -p.RefPoint[j]
		}
		hv, mx := pareto.Hypervolume(front, ref), p.MaxHV
		l.HV, l.MaxHV = &hv, &mx
		if mx > hv {
			r := math.Log10(mx - hv)
			l.LogHVRegret = &r
		}
		return l, nil
	}
	if nFeas > 0 {
		l.BestFeasible = &best
		if !math.IsNaN(p.Optimum) {
			r := -p.Optimum - best
			l.Regret = &r
		}
	}
	return l, nil
}
