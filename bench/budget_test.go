package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/usersuite"
)

// A tiny suite (2 problems, 2 acquisitions, 2 seeds, 2–3 iterations): a
// problem's own Init and Iters replace the suite's for its runs only, and
// the outputs read each run up to its own last iteration.
func TestPerProblemBudget(t *testing.T) {
	out := t.TempDir()
	s := Suite{
		Problems:     []Problem{{Name: "synthetic/branin", Init: 3, Iters: 2}, {Name: "synthetic/hartmann3"}},
		Acquisitions: []string{"random", "ei"}, Iters: 3, Init: 2, Seeds: 2, Jobs: 2, Out: out,
	}
	if _, err := Run(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadRunsCSV(filepath.Join(out, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int{}
	for _, r := range rows {
		init := map[string]int{"synthetic/branin": 3, "synthetic/hartmann3": 2}[r.Problem]
		if r.Evals != init+r.Iter {
			t.Errorf("%s %s iteration %d: %d evaluations, want %d", r.Problem, r.Acquisition, r.Iter, r.Evals, init+r.Iter)
		}
		last[r.Problem] = max(last[r.Problem], r.Iter)
	}
	if last["synthetic/branin"] != 2 || last["synthetic/hartmann3"] != 3 || len(rows) != 2*2*(2+3) {
		t.Errorf("%d rows, last iterations %v; want 20, branin 2, hartmann3 3", len(rows), last)
	}
	sum, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := os.ReadFile(filepath.Join(out, comparisonFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, text, want string }{
		{"summary.md", string(sum), "2–3 (per problem) BO iterations per run"},
		{"summary.md", string(sum), "runs: 8 complete, 0 failed, 0 incomplete (of 8)"},
		{"summary.md", string(sum), "median log10 best-evaluated regret"},
		{"comparison.md", string(cmp), "## Normalized medians"},
		{"comparison.md", string(cmp), "| synthetic/branin | 1 | 3 | 2 |"},
		{"comparison.md", string(cmp), "| synthetic/hartmann3 | 1 | 2 | 3 |"},
	} {
		if !strings.Contains(c.text, c.want) {
			t.Errorf("%s lacks %q:\n%s", c.file, c.want, c.text)
		}
	}
}

func TestUserProblemsBudgets(t *testing.T) {
	ps := UserProblems()
	if len(ps) != len(usersuite.Problems()) {
		t.Fatalf("%d user problems, want %d", len(ps), len(usersuite.Problems()))
	}
	for i, p := range usersuite.Problems() {
		init, iters := usersuite.Budget(len(p.Params))
		if ps[i].Name != usersuite.Prefix+p.Name || ps[i].Init != init || ps[i].Iters != iters {
			t.Errorf("%+v, want %s%s with init %d, iters %d", ps[i], usersuite.Prefix, p.Name, init, iters)
		}
		if init < 6 || iters < 25 || iters > 60 {
			t.Errorf("%s: budget %d + %d outside 6+ initial points and 25–60 iterations", p.Name, init, iters)
		}
	}
}

// randomScale agrees with an independent estimate from 20,000 other uniform
// points, for a maximizing and a minimizing problem.
func TestRandomScale(t *testing.T) {
	s := &Suite{}
	for _, name := range []string{"bumps2", "hpo4"} {
		p, err := usersuite.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		got := randomScale(context.Background(), s, Problem{Name: usersuite.Prefix + name})
		sp, err := host.NewSpace(p.Params)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(99, 99))
		var vs []float64
		u := make([]float64, sp.Dim())
		for range 20000 {
			for j := range u {
				u[j] = rng.Float64()
			}
			vs = append(vs, p.F(sp.ToNative(u)))
		}
		slices.Sort(vs)
		want := p.Opt - vs[len(vs)/2]
		if p.Minimize {
			want = -want
		}
		if want <= 0 || math.Abs(got/want-1) > 0.05 {
			t.Errorf("%s: scale %v, independent estimate %v", name, got, want)
		}
	}
	if got := randomScale(context.Background(), s, Problem{Name: "no/such"}); !math.IsNaN(got) {
		t.Errorf("unknown problem: scale %v, want NaN", got)
	}
}

// comparison.md documents the user-suite problems it compares (and only
// those): what each is, its goal, f* and optimizer.
func TestUserProblemsMarkdown(t *testing.T) {
	s := &Suite{Problems: []Problem{{Name: "synthetic/branin"}, {Name: usersuite.Prefix + "hpo4"}}}
	md := userProblemsMarkdown(s)
	for _, want := range []string{"## The user-suite problems", "| user/hpo4 | 4-d tuning surface", "| 4 | min | 0 | 0.08 | (0.00316228, 4, 128, 0.3) |"} {
		if !strings.Contains(md, want) {
			t.Errorf("lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "branin") {
		t.Errorf("lists a problem outside the user suite:\n%s", md)
	}
	if md := userProblemsMarkdown(&Suite{Problems: []Problem{{Name: "synthetic/branin"}}}); md != "" {
		t.Errorf("no user problems, yet:\n%s", md)
	}
}
