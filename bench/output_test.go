package bench

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

func ptr(x float64) *float64 { return &x }

// fakeRuns builds results with known regrets: ei's two runs end at 1e-2 and
// 1e-3 (log10 −2, −3), random has one complete run ending at 1 and one
// failed after an iteration.
func fakeRuns() (Suite, []runResult) {
	s := Suite{Problems: []Problem{{Name: "synthetic/branin"}}, Acquisitions: []string{"ei", "random"}, Iters: 2, Seeds: 2}
	p := s.Problems[0]
	mk := func(a string, i int, st status, regrets ...float64) runResult {
		r := runResult{Spec: runSpec{Problem: p, Acquisition: a, Batch: 1, Index: i, Seed: seed(p.Label(), "", 1, i)}, Status: st}
		for t, rg := range regrets {
			r.Rows = append(r.Rows, row{Iter: t + 1, Evals: 3 + t, Regret: ptr(rg), BestValue: ptr(-0.4 - rg),
				FitS: 0.01, ProposeS: float64(t+1) * 0.1, EvalS: 0.001, Fallback: a == "random" && t == 0})
		}
		if st == StatusFailed {
			r.Err = "objective | crashed"
		}
		return r
	}
	return s, []runResult{
		mk("ei", 0, StatusDone, 0.1, 1e-2),
		mk("ei", 1, StatusDone, 0.3, 1e-3),
		mk("random", 0, StatusSkipped, 2, 1),
		mk("random", 1, StatusFailed, 3),
	}
}

func TestStatistics(t *testing.T) {
	_, runs := fakeRuns()
	c := curve("ei", runs[:2], 2)
	// Iteration 1: regrets 0.1, 0.3 → mean 0.2, SE = sd/√2 = 0.1414/1.414 = 0.1.
	if len(c.Iter) != 2 || math.Abs(c.Mean[0]-0.2) > 1e-15 || math.Abs(c.SE[0]-0.1) > 1e-15 || c.N[0] != 2 {
		t.Fatalf("curve %+v", c)
	}
	// log10 regrets −1 and log10 0.3: median their mean, quartiles a
	// quarter of the way in from each.
	l1, l3 := -1.0, math.Log10(0.3)
	if math.Abs(c.Median[0]-(l1+l3)/2) > 1e-15 || math.Abs(c.Q1[0]-(l1+0.25*(l3-l1))) > 1e-15 || math.Abs(c.Q3[0]-(l1+0.75*(l3-l1))) > 1e-15 {
		t.Errorf("quartiles %v %v %v, want %v %v %v", c.Q1[0], c.Median[0], c.Q3[0], l1+0.25*(l3-l1), (l1+l3)/2, l1+0.75*(l3-l1))
	}
	if q := []float64{quantile([]float64{4, 1, 3, 2, 5}, 0.25), quantile([]float64{7}, 0.75), quantile([]float64{1, 2}, 1)}; q[0] != 2 || q[1] != 7 || q[2] != 2 {
		t.Errorf("quantiles %v, want [2 7 2]", q)
	}
	if m := median([]float64{3, 1, 2, 10}); m != 2.5 {
		t.Errorf("median = %v", m)
	}
	if !math.IsNaN(stdErr([]float64{1})) || !math.IsNaN(mean(nil)) {
		t.Error("SE of one value and mean of none must be NaN")
	}
	if got := log10Regret(-1e-15); got != -12 {
		t.Errorf("log10Regret of a round-off negative regret = %v, want the floor -12", got)
	}
	st := statsOf("random", runs[2:], 2)
	if st.complete != 1 || st.failed != 1 || st.fallbacks != 2 || st.medPropose != 0.1 {
		t.Errorf("stats %+v: want 1 complete, 1 failed, 2 fallback iterations, median propose 0.1", st)
	}
}

func TestWriteOutputs(t *testing.T) {
	s, runs := fakeRuns()
	dir := t.TempDir()
	hist := &History{Invocations: []invocation{{WallS: 90}, {WallS: 30}}}
	files, err := write(dir, &s, runs, hist)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 5 {
		t.Errorf("files %v: want runs.csv, 2 figures, summary.md, comparison.md", files)
	}
	rows, err := ReadRunsCSV(filepath.Join(dir, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	var want []csvRow
	for _, r := range runs {
		for _, row := range r.Rows {
			want = append(want, csvRow{Problem: "synthetic/branin", Acquisition: r.Spec.Acquisition, Batch: 1,
				Seed: r.Spec.Index, StudySeed: r.Spec.Seed, row: row})
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("%d CSV rows, want %d", len(rows), len(want))
	}
	for i := range want {
		g, w := rows[i], want[i]
		if g.Acquisition != w.Acquisition || g.Seed != w.Seed || g.StudySeed != w.StudySeed || g.Iter != w.Iter ||
			g.Evals != w.Evals || *g.Regret != *w.Regret || *g.BestValue != *w.BestValue || g.ProposeS != w.ProposeS ||
			g.Fallback != w.Fallback {
			t.Errorf("row %d: read %+v, wrote %+v", i, g, w)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		// log10 finals −2, −3: mean −2.5, SE 0.5, median −2.5; propose
		// times 0.1, 0.2, 0.1, 0.2 → median 0.15.
		"| ei | 2 | -2.50 | 0.50 | -2.50 | — | 0.150 | 0.010 | 0 | 0 |",
		"| random | 1 | 0.00 | — | 0.00 | — | 0.100 | 0.010 | 2 | 1 |", // propose 0.1, 0.2, 0.1
		"2m0s over all 2 invocation(s)",
		"| synthetic/branin | random | 1 | 1 | failed | 1 | objective \\| crashed |",
		"runs: 3 complete, 1 failed, 0 incomplete (of 4)",
	} {
		if !strings.Contains(string(md), line) {
			t.Errorf("summary.md lacks %q:\n%s", line, md)
		}
	}
	testenv.CheckPNG(t, filepath.Join(dir, "regret_synthetic-branin_q1.png"))
	testenv.CheckPNG(t, filepath.Join(dir, "box_synthetic-branin_q1.png"))
}

// A failed run that nevertheless holds the last iteration (it failed after
// recording it) counts as failed, not complete: summary.md lists it and
// leaves it out of the final-regret statistics, matching the exit status.
func TestFailedRunWithFinalRow(t *testing.T) {
	s, runs := fakeRuns()
	runs[3].Rows = append(runs[3].Rows, row{Iter: 2, Evals: 4, Regret: ptr(0.5), BestValue: ptr(-0.9)})
	if _, ok := finalRegret(runs[3], 2); ok {
		t.Error("a failed run has a final regret")
	}
	if st := statsOf("random", runs[2:], 2); st.complete != 1 || st.failed != 1 || len(st.finals) != 1 {
		t.Errorf("stats %+v: want 1 complete (final log10 0), 1 failed", st)
	}
	md := summaryMarkdown(&s, runs, groupRuns(&s, runs), nil)
	for _, want := range []string{"runs: 3 complete, 1 failed, 0 incomplete (of 4)",
		"| synthetic/branin | random | 1 | 1 | failed | 2 | objective \\| crashed |"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary.md lacks %q:\n%s", want, md)
		}
	}
}
