//go:build ignore

// measure.go measures the default acquisition ("tes") in studies with a
// fixed (pinned) parameter: the first coordinate of each problem is pinned
// at its global maximizer's value, so the slice the study searches holds
// the global maximum and the regret f* − f(x) is known. Run from the
// repository root:
//
//	GOMAXPROCS=1 nice go run docs/results/fixed/measure.go -label NAME -half tune|held-out [-seeds 10] -out DIR
//
// It is resumable: every finished run is appended to DIR/NAME.jsonl
// (problem, seed, final regret by the user's rule and by the oracle's),
// and a run already there is not run again. -table A,B compares two
// labels' runs (paired by seed) and prints a Markdown table.
//
// The problems follow the broad suite's held-out split
// (docs/results/broad/SPLIT.md): BBOB f1–f24 at d = 5, instance 1 (tune)
// or instance 6 (held out), and BoTorch's any-dimension functions of each
// half at d = 4 and 8 (tune: griewank, powell; held out: dixonprice,
// rastrigin). Budget and protocol as the broad suite's: 2 initial points,
// 35 iterations at d ≤ 6 and 45 beyond, batch 1, noise variance 1e-4.
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
}

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
	seeds := flag.Int("seeds", 10, "seeds per problem")
	out := flag.String("out", "", "directory of the runs files")
	table := flag.String("table", "", "A,B: compare the runs of two labels instead of running")
	flag.Parse()
	if *out == "" || (*table == "" && *label == "") || (*half != "tune" && *half != "held-out") {
		fmt.Fprintln(os.Stderr, "measure: want -out DIR and -label NAME (or -table A,B), -half tune|held-out")
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
	res, err := host.Optimize(context.Background(), obj, host.Options{
		Acquisition: "tes", Batch: 1, Init: 2, Iters: iters, Seed: uint64(seed), Params: params,
		Fixed: map[string]float64{"x1": fn.Maximizers[0][0]},
	})
	if err != nil {
		fail(fmt.Errorf("%s seed %d: %w", p.label, seed, err))
	}
	r := run{Problem: p.label, Seed: seed, User: math.Inf(1), Oracle: math.Inf(1)}
	best := math.Inf(-1)
	for _, t := range res.Trials {
		if t.Status != host.Complete {
			continue
		}
		if t.X[0] != fn.Maximizers[0][0] {
			fail(fmt.Errorf("%s seed %d: trial %d has x1 = %v, pinned at %v", p.label, seed, t.ID, t.X[0], fn.Maximizers[0][0]))
		}
		v, err := fn.Eval(t.X)
		if err != nil {
			fail(err)
		}
		reg := math.Max(fn.Optimum-v, 1e-12)
		r.Oracle = math.Min(r.Oracle, reg)
		if t.Value > best {
			best, r.User = t.Value, reg
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
// over the seeds both have), and a summary line.
func printTable(half string, A, B map[string]run, a, b string) {
	fmt.Printf("| problem | %s | %s | paired Δ (%s − %s) |\n|---|---|---|---|\n", a, b, b, a)
	var sum float64
	var np, better, worse, le int
	for _, p := range problems(half) {
		var la, lb, d []float64
		for s := 1; s <= 100; s++ {
			ra, okA := A[key(p.label, s)]
			rb, okB := B[key(p.label, s)]
			if !okA || !okB {
				continue
			}
			la, lb = append(la, math.Log10(ra.User)), append(lb, math.Log10(rb.User))
			d = append(d, math.Log10(rb.User)-math.Log10(ra.User))
		}
		if len(d) == 0 {
			continue
		}
		m, se := meanSE(d)
		fmt.Printf("| %s | %.2f | %.2f | %+.2f ± %.2f (%d) |\n", p.label, median(la), median(lb), m, se, len(d))
		sum += m
		np++
		if median(lb) <= median(la) {
			le++
		}
		if m < -2*se {
			better++
		} else if m > 2*se {
			worse++
		}
	}
	fmt.Printf("\n%s half, %d problems: mean paired Δ %+.3f; %s better / worse beyond 2 SE: %d / %d; %s's median ≤ %s's on %d\n",
		half, np, sum/float64(max(np, 1)), b, better, worse, b, a, le)
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
