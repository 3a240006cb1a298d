//go:build ignore

// measure.go measures the default acquisition ("tes") in studies with a
// fixed (pinned) parameter: the first coordinate of each problem is pinned
// at its global maximizer's value, so the slice the study searches holds
// the global maximum and the regret f* − f(x) is known. Run from the
// repository root:
//
//	GOMAXPROCS=1 nice go run docs/results/fixed/measure.go -label NAME -half tune|held-out [-seeds 10] [-pin F] -out DIR
//
// With -pin F (0 < F < 1) the first coordinate is pinned at the fraction F
// of its range instead, a slice whose maximum is not known: the regret is
// then taken against the best value any run of the compared labels found
// on that slice (-table), so it compares the labels, not each with the
// slice's optimum.
//
// It is resumable: every finished run is appended to DIR/NAME.jsonl
// (problem, seed, final regret by the user's rule and by the oracle's,
// and the noise-free values behind them), and a run already there is not
// run again. -table A,B compares two labels' runs (paired by seed) and
// prints a Markdown table.
//
// The problems follow the broad suite's held-out split
// (docs/results/broad/SPLIT.md): BBOB f1–f24 at d = 5, instance 1 (tune)
// or instance 6 (held out), and BoTorch's any-dimension functions of each
// half at d = 4 and 8 (tune: griewank, powell; held out: dixonprice,
// rastrigin). Budget and protocol as the broad suite's: 2 initial points,
// 35 iterations at d ≤ 6 and 45 beyond, batch 1 (-batch B: about the same
// number of evaluations in batches of B), noise variance 1e-4.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/synthetic"
	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/problems/usersuite"
)

type problem struct {
	name   string            // testfunc name
	params map[string]string // synthetic objective parameters
	label  string
}

type run struct {
	Problem string  `json:"problem"`
	Seed    int     `json:"seed"`
	User    float64 `json:"user"`   // f* − f(x) of the best observed trial
	Oracle  float64 `json:"oracle"` // the smallest f* − f(x) evaluated
	// UserF and BestF are f(x) of the best observed trial and the largest
	// f(x) evaluated (noise-free).
	UserF float64 `json:"user_f"`
	BestF float64 `json:"best_f"`
}

// maxSeeds bounds -seeds; the tables read the seeds 1 to maxSeeds.
const maxSeeds = 100

var (
	pinAt = flag.Float64("pin", 0, "pin the first coordinate at this fraction of its range (0: at the global maximizer's value)")
	batch = flag.Int("batch", 1, "points per iteration; the budget of evaluations is the same, in ⌈iterations/batch⌉ iterations")
)

func problems(half string) []problem {
	var out []problem
	inst, fns := "1", []string{"griewank", "powell"}
	if half == "held-out" {
		inst, fns = "6", []string{"dixonprice", "rastrigin"}
	}
	for f := 1; f <= testfunc.BBOBFunctions; f++ {
		name := fmt.Sprintf("%s%d", testfunc.BBOBPrefix, f)
		out = append(out, problem{name, map[string]string{synthetic.KeyDim: "5", synthetic.KeyInstance: inst}, name + ":dim=5:instance=" + inst})
	}
	for _, fn := range fns {
		for _, d := range []string{"4", "8"} {
			out = append(out, problem{fn, map[string]string{synthetic.KeyDim: d}, fn + ":dim=" + d})
		}
	}
	return out
}

func main() {
	label := flag.String("label", "", "name of this build's runs (DIR/LABEL.jsonl)")
	half := flag.String("half", "tune", "tune or held-out")
	seeds := flag.Int("seeds", 10, fmt.Sprintf("seeds per problem, 1 to %d", maxSeeds))
	out := flag.String("out", "", "directory of the runs files")
	table := flag.String("table", "", "A,B: compare the runs of two labels instead of running")
	flag.Parse()
	if *out == "" || (*table == "" && *label == "") || (*half != "tune" && *half != "held-out") || !(*pinAt >= 0 && *pinAt < 1) || *batch < 1 || *batch > 64 || *seeds < 1 || *seeds > maxSeeds {
		fmt.Fprintf(os.Stderr, "measure: want -out DIR and -label NAME (or -table A,B), -half tune|held-out, -pin in [0, 1), -batch 1 to 64, -seeds 1 to %d\n", maxSeeds)
		os.Exit(2)
	}
	if *table != "" {
		a, b, _ := strings.Cut(*table, ",")
		printTable(*half, load(filepath.Join(*out, a+".jsonl")), load(filepath.Join(*out, b+".jsonl")), a, b)
		return
	}
	path := filepath.Join(*out, *label+".jsonl")
	done := load(path)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	for s := 1; s <= *seeds; s++ {
		for _, p := range problems(*half) {
			if _, ok := done[key(p.label, s)]; ok {
				continue
			}
			r := runOne(p, s)
			b, _ := json.Marshal(r)
			if _, err := f.Write(append(b, '\n')); err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "%s seed %d: user %.3g oracle %.3g\n", p.label, s, r.User, r.Oracle)
		}
	}
}

func key(p string, s int) string { return p + "|" + strconv.Itoa(s) }

func runOne(p problem, seed int) run {
	s := testfunc.Settings{Instance: atoi(p.params[synthetic.KeyInstance])}
	s.Dim = atoi(p.params[synthetic.KeyDim])
	fn, err := testfunc.New(p.name, s)
	if err != nil {
		fail(err)
	}
	obj, err := synthetic.New(p.name)
	if err != nil {
		fail(err)
	}
	params := map[string]string{}
	for k, v := range p.params {
		params[k] = v
	}
	_, iters := usersuite.Budget(fn.Dim)
	iters = (iters + *batch - 1) / *batch
	pin := fn.Maximizers[0][0]
	if *pinAt > 0 {
		pin = fn.Lower[0] + *pinAt*(fn.Upper[0]-fn.Lower[0])
	}
	res, err := host.Optimize(context.Background(), obj, host.Options{
		Acquisition: "tes", Batch: *batch, Init: 2, Iters: iters, Seed: uint64(seed), Params: params,
		Fixed: map[string]float64{"x1": pin},
	})
	if err != nil {
		fail(fmt.Errorf("%s seed %d: %w", p.label, seed, err))
	}
	r := run{Problem: p.label, Seed: seed, User: math.Inf(1), Oracle: math.Inf(1), UserF: math.Inf(-1), BestF: math.Inf(-1)}
	best := math.Inf(-1)
	for _, t := range res.Trials {
		if t.Status != host.Complete {
			continue
		}
		if t.X[0] != pin {
			fail(fmt.Errorf("%s seed %d: trial %d has x1 = %v, pinned at %v", p.label, seed, t.ID, t.X[0], pin))
		}
		v, err := fn.Eval(t.X)
		if err != nil {
			fail(err)
		}
		reg := math.Max(fn.Optimum-v, 1e-12)
		r.Oracle, r.BestF = math.Min(r.Oracle, reg), math.Max(r.BestF, v)
		if t.Value > best {
			best, r.User, r.UserF = t.Value, reg, v
		}
	}
	return r
}

func atoi(s string) int {
	if s == "" {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		fail(err)
	}
	return v
}

func load(path string) map[string]run {
	out := map[string]run{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return out
	} else if err != nil {
		fail(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r run
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			fail(fmt.Errorf("%s: %w", path, err))
		}
		out[key(r.Problem, r.Seed)] = r
	}
	return out
}

// printTable prints, per problem of the half, both labels' median final
// log10 regret (user's rule) and the paired difference B − A (mean ± SE
// over the seeds both have), and a summary line. Off the maximizer
// (-pin) one run per problem has regret 0 against the best value found
// (floored at 1e-12), which would swamp a mean, so the paired column
// counts the seeds on which B's recommendation is better or worse.
func printTable(half string, A, B map[string]run, a, b string) {
	col := fmt.Sprintf("paired Δ (%s − %s)", b, a)
	if *pinAt > 0 {
		col = fmt.Sprintf("seeds %s better / worse", b)
	}
	fmt.Printf("| problem | %s | %s | %s |\n|---|---|---|---|\n", a, b, col)
	var sum float64
	var np, better, worse, le, won, lost int
	for _, p := range problems(half) {
		la, lb, d := paired(p.label, A, B)
		if len(d) == 0 {
			continue
		}
		np++
		if median(lb) <= median(la) {
			le++
		}
		if *pinAt > 0 {
			w, l := signs(d)
			won, lost = won+w, lost+l
			fmt.Printf("| %s | %.2f | %.2f | %d / %d |\n", p.label, median(la), median(lb), w, l)
			continue
		}
		m, se := meanSE(d)
		fmt.Printf("| %s | %.2f | %.2f | %+.2f ± %.2f (%d) |\n", p.label, median(la), median(lb), m, se, len(d))
		sum += m
		if m < -2*se {
			better++
		} else if m > 2*se {
			worse++
		}
	}
	if *pinAt > 0 {
		fmt.Printf("\n%s half, %d problems: %s's recommendation better on %d seeds, worse on %d; %s's median ≤ %s's on %d\n",
			half, np, b, won, lost, b, a, le)
		return
	}
	fmt.Printf("\n%s half, %d problems: mean paired Δ %+.3f; %s better / worse beyond 2 SE: %d / %d; %s's median ≤ %s's on %d\n",
		half, np, sum/float64(max(np, 1)), b, better, worse, b, a, le)
}

// paired returns, over the seeds both A and B ran on problem p, their
// final log10 regrets and the differences B − A. Off the maximizer (-pin)
// the regret is against the best value either label found on the slice.
func paired(p string, A, B map[string]run) (la, lb, d []float64) {
	ref := math.Inf(-1)
	for s := 1; s <= maxSeeds; s++ {
		for _, runs := range []map[string]run{A, B} {
			if r, ok := runs[key(p, s)]; ok {
				ref = math.Max(ref, r.BestF)
			}
		}
	}
	regret := func(r run) float64 {
		if *pinAt == 0 {
			return r.User
		}
		return math.Max(ref-r.UserF, 1e-12)
	}
	for s := 1; s <= maxSeeds; s++ {
		ra, okA := A[key(p, s)]
		rb, okB := B[key(p, s)]
		if !okA || !okB {
			continue
		}
		ga, gb := math.Log10(regret(ra)), math.Log10(regret(rb))
		la, lb, d = append(la, ga), append(lb, gb), append(d, gb-ga)
	}
	return la, lb, d
}

// signs counts the negative (B better) and positive differences.
func signs(d []float64) (neg, pos int) {
	for _, v := range d {
		if v < 0 {
			neg++
		} else if v > 0 {
			pos++
		}
	}
	return neg, pos
}

func meanSE(v []float64) (float64, float64) {
	var m, ss float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	if len(v) < 2 {
		return m, math.NaN()
	}
	return m, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
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

func fail(err error) {
	fmt.Fprintln(os.Stderr, "measure:", err)
	os.Exit(1)
}
