package bench

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/mixedsuite"
	"github.com/tesbo/tesbo/problems/usersuite"
)

var update = flag.Bool("update", false, "rewrite docs/results/broad/SPLIT.md from the code")

// TestBroadSplitComplete: every problem of the user and mixed suites and
// every BoTorch function of the broad suite is in a half (a new family
// must be placed in splitFamilies), each suite has problems in both
// halves, and BBOB instances follow 1–5 tune, 6–15 held out.
func TestBroadSplitComplete(t *testing.T) {
	names := append(usersuite.Names(), mixedsuite.Names()...)
	for _, f := range botorchFunctions() {
		names = append(names, "synthetic/"+f)
	}
	perSuite := map[string]map[string]int{}
	for _, n := range names {
		h := Problem{Name: n}.Half()
		if h != HalfTune && h != HalfHeldOut {
			t.Errorf("%s has no half: add its family to splitFamilies", n)
		}
		pre, _ := family(n)
		if perSuite[pre] == nil {
			perSuite[pre] = map[string]int{}
		}
		perSuite[pre][h]++
	}
	for pre, c := range perSuite {
		if c[HalfTune] == 0 || c[HalfHeldOut] == 0 {
			t.Errorf("suite %s: %v, want problems in both halves", pre, c)
		}
	}
	if len(botorchFunctions()) != 12 {
		t.Errorf("BoTorch functions %v, want the issue's 12", botorchFunctions())
	}
	for inst, want := range map[string]string{"1": HalfTune, "5": HalfTune, "6": HalfHeldOut, "15": HalfHeldOut, "16": "", "0": "", "x": ""} {
		p := Problem{Name: "synthetic/bbob-f7", Params: map[string]string{"dim": "5", "instance": inst}}
		if got := p.Half(); got != want {
			t.Errorf("%s: half %q, want %q", p.Label(), got, want)
		}
	}
	if h := (Problem{Name: "synthetic/bbob-f7"}).Half(); h != HalfTune {
		t.Errorf("bbob-f7 without instance (instance 1): half %q, want tune", h)
	}
	for _, n := range []string{"synthetic/branin", "synthetic/hartmann6", "myplugin", "user/nope"} {
		if h := (Problem{Name: n}).Half(); h != "" {
			t.Errorf("%s: half %q, want none (outside the split)", n, h)
		}
	}
	// One-hot variants go with their problem; families by name prefix.
	for n, want := range map[string]string{"mixed/func2c": "func", "mixed/func3c-onehot": "func", "user/bumps4-offset": "bumps", "user/noisy-bumps3": "noisy-bumps"} {
		if _, f := family(n); f != want {
			t.Errorf("Family(%s) = %s, want %s", n, f, want)
		}
	}
}

// TestBroadProblems: the default suite's size and budgets, --half
// partitions it, the BBOB options select dimensions and instances, bad
// options are refused, and every problem opens and takes its parameters.
func TestBroadProblems(t *testing.T) {
	all, err := BroadProblems(BroadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// 8 fixed-dimension BoTorch functions + 4 at two dimensions, 24 BBOB ×
	// 2 dimensions × 2 instances, 16 user and 5 mixed problems.
	if want := 8 + 4*2 + 24*2*2 + 16 + 5; len(all) != want {
		t.Fatalf("%d problems, want %d", len(all), want)
	}
	labels := map[string]bool{}
	for _, p := range all {
		if labels[p.Label()] {
			t.Errorf("%s twice", p.Label())
		}
		labels[p.Label()] = true
		if p.Half() == "" || p.Iters == 0 {
			t.Errorf("%s: half %q, iterations %d; want a half and a budget", p.Label(), p.Half(), p.Iters)
		}
	}
	for label, iters := range map[string]int{"synthetic/beale": 25, "synthetic/shekel": 35, "synthetic/cosine8": 45,
		"synthetic/powell:dim=8": 45, "synthetic/bbob-f3:dim=5:instance=6": 35, "user/bumps8": 45} {
		if !labels[label] {
			t.Errorf("%s missing", label)
			continue
		}
		for _, p := range all {
			if p.Label() == label && p.Iters != iters {
				t.Errorf("%s: %d iterations, want %d", label, p.Iters, iters)
			}
		}
	}
	tune, _ := BroadProblems(BroadOptions{Half: HalfTune})
	held, _ := BroadProblems(BroadOptions{Half: HalfHeldOut})
	if len(tune)+len(held) != len(all) || len(tune) == 0 || len(held) == 0 {
		t.Errorf("halves of %d and %d problems, want a partition of %d", len(tune), len(held), len(all))
	}
	for _, p := range held {
		if p.Half() != HalfHeldOut || strings.Contains(p.Label(), "instance=1") {
			t.Errorf("held-out half holds %s (%s)", p.Label(), p.Half())
		}
	}
	big, err := BroadProblems(BroadOptions{BBOBDims: []int{10}, BBOBInstances: []int{2, 3, 9}})
	if err != nil {
		t.Fatal(err)
	}
	var bbob []string
	for _, p := range big {
		if strings.HasPrefix(p.Name, bbobPrefix) {
			bbob = append(bbob, p.Label())
		}
	}
	if len(bbob) != 72 || !slices.Contains(bbob, "synthetic/bbob-f24:dim=10:instance=9") {
		t.Errorf("BBOB at d = 10, instances 2, 3, 9: %d problems %v", len(bbob), bbob[:min(3, len(bbob))])
	}
	for _, o := range []BroadOptions{{Half: "both"}, {BBOBInstances: []int{16}}, {BBOBInstances: []int{0}}, {BBOBDims: []int{1}}} {
		if _, err := BroadProblems(o); err == nil {
			t.Errorf("BroadProblems(%+v) accepted", o)
		}
	}
	ctx := context.Background()
	failed := 0
	for _, p := range all {
		if failed == 5 {
			t.Fatal("stopping after 5 problems that do not open")
		}
		obj, _, err := Synthetic(ctx, p.Name)
		if err == nil {
			err = host.ConfigureObjective(ctx, obj, p.Name, host.Options{Seed: 1, Params: p.Params})
		}
		if err != nil {
			t.Errorf("%s: %v", p.Label(), err)
			failed++
		}
	}
}

// TestBroadSplitDoc: docs/results/broad/SPLIT.md is splitMarkdown's output
// (-update rewrites it).
func TestBroadSplitDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "results", "broad", "SPLIT.md")
	want := splitMarkdown()
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("%s differs from the split in the code; run go test ./bench -run TestBroadSplitDoc -args -update\n--- want\n%s", path, want)
	}
	for _, s := range []string{"| user | bumps | tune | `user/bumps2`, `user/bumps4-offset`, `user/bumps8` |", "| synthetic | shekel | tune |", "instances 1–5 tune, 6–15 held out"} {
		if !strings.Contains(want, s) {
			t.Errorf("SPLIT.md lacks %q", s)
		}
	}
}

// TestComparisonHalves: comparison.md reports each half's wins/ties/losses
// and targets apart, and counts the problems outside the split;
// summary.md counts the halves. Without halves the section is absent.
func TestComparisonHalves(t *testing.T) {
	s := Suite{Acquisitions: []string{"tes", "ei", "random"}, Iters: 1, Seeds: 10}
	scales := map[string]map[string]float64{
		"user/bumps2":      {"tes": 0.01, "ei": 0.1, "random": 1}, // tune: tes wins
		"user/fail2":       {"tes": 1, "ei": 0.1, "random": 0.5},  // held-out: tes loses
		"synthetic/branin": {"tes": 0.5, "ei": 0.5, "random": 0.5},
	}
	var runs []runResult
	for _, pn := range []string{"user/bumps2", "user/fail2", "synthetic/branin"} {
		p := Problem{Name: pn}
		s.Problems = append(s.Problems, p)
		for _, a := range s.Acquisitions {
			for i := range 10 {
				v := scales[pn][a] * (1 + float64(i)/100)
				runs = append(runs, runResult{Spec: runSpec{Problem: p, Acquisition: a, Batch: 1, Index: i}, Status: StatusDone,
					Rows: []row{{Iter: 1, BestEvalRegret: &v}}})
			}
		}
	}
	md := comparisonMarkdown(&s, groupRuns(&s, runs))
	_, halves, ok := strings.Cut(md, "## By half")
	if !ok {
		t.Fatalf("comparison.md has no per-half section:\n%s", md)
	}
	tune, held, _ := strings.Cut(halves, "### held-out")
	for _, c := range []struct{ part, want string }{
		{halves, "1 problem(s) outside the split"},
		{tune, "### tune: 1 problem(s)\n\nuser/bumps2\n"},
		{tune, "| tes |  | 1/0/0 | 1/0/0 |"},
		{tune, "median ≤ EI's (qEI's for |B| > 1): 1 of 1 problems (100%"},
		{held, ": 1 problem(s)\n\nuser/fail2\n"},
		{held, "| tes |  | 0/0/1 | 0/0/1 |"},
		{held, "median ≤ EI's (qEI's for |B| > 1): 0 of 1 problems (0%; target ≥ 80%: NOT met); missed on user/fail2"},
	} {
		if !strings.Contains(c.part, c.want) {
			t.Errorf("per-half section lacks %q:\n%s", c.want, halves)
		}
	}
	if sum := summaryMarkdown(&s, runs, groupRuns(&s, runs), nil); !strings.Contains(sum, "1 tune, 1 held-out problem(s), 1 outside the split") {
		t.Errorf("summary.md does not count the halves:\n%s", sum)
	}
	s.Problems = s.Problems[2:]
	if md := comparisonMarkdown(&s, groupRuns(&s, runs[60:])); strings.Contains(md, "By half") {
		t.Errorf("a suite outside the split got a per-half section:\n%s", md)
	}
}

func TestParseInts(t *testing.T) {
	got, err := ParseInts("--bbob-instances", []string{"1-3, 5", "7"})
	if err != nil || !slices.Equal(got, []int{1, 2, 3, 5, 7}) {
		t.Errorf("got %v, %v; want [1 2 3 5 7]", got, err)
	}
	for _, bad := range [][]string{{"0"}, {"3-1"}, {"1,1"}, {"x"}, {"1-"}, {""}} {
		if _, err := ParseInts("--bbob-dims", bad); err == nil || !strings.Contains(err.Error(), "--bbob-dims") {
			t.Errorf("ParseInts(%q): %v, want an error naming the flag", bad, err)
		}
	}
}
