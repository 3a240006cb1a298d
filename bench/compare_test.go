package bench

import (
	"math"
	"strings"
	"testing"
)

// compareRuns builds 10 finished runs per (problem, acquisition) whose final
// best-evaluated regret is scale·(1 + i/100), i = 0..9 (median 1.045·scale).
func compareRuns(scales map[string]map[string]float64) ([]runResult, Suite) {
	s := Suite{Acquisitions: []string{"tes", "ei", "random"}, Iters: 1, Seeds: 10}
	var runs []runResult
	for _, pn := range []string{"p1", "p2"} {
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
	return runs, s
}

func TestComparisonMarkdown(t *testing.T) {
	runs, s := compareRuns(map[string]map[string]float64{
		"p1": {"tes": 0.01, "ei": 0.1, "random": 1},    // tes wins both
		"p2": {"tes": 0.5, "ei": 0.5, "random": 0.505}, // all tie
	})
	md := comparisonMarkdown(&s, groupRuns(&s, runs))
	for _, want := range []string{
		"| p1 | 1 | 0.0105 ± ", "(×1) | 0.105 ± ", "(×10) | 1.04 ± ",
		"| tes |  | 1/1/0 | 1/1/0 |", "| random | 0/1/1 | 0/1/1 |  |",
		"median ≤ EI's (qEI's for |B| > 1): 2 of 2 problems (100%; target ≥ 80%: met)",
		"median ≤ 0.2 × random search's: 1 of 2 problems (50%; target ≥ 80%: NOT met); missed on p2",
		"- … by any measured method: 1 of 2 problems; by none on p2\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison.md lacks %q:\n%s", want, md)
		}
	}
}

// The bootstrap SE of the median of normal samples is close to the
// asymptotic √(π/2)·σ/√n.
func TestBootstrapMedianSE(t *testing.T) {
	xs := make([]float64, 401)
	for i := range xs {
		// Normal quantiles: a sample with exactly the normal's shape.
		xs[i] = math.Sqrt2 * math.Erfinv(2*(float64(i)+0.5)/float64(len(xs))-1)
	}
	want := math.Sqrt(math.Pi/2) / math.Sqrt(float64(len(xs)))
	if got := BootstrapMedianSE(xs); math.Abs(got-want) > 0.15*want {
		t.Fatalf("bootstrap SE %.4f, want ≈ %.4f", got, want)
	}
}

// A problem where another method reaches 0.2 × random's median counts as
// reachable even when the default misses it.
func TestReachMarkdown(t *testing.T) {
	runs, s := compareRuns(map[string]map[string]float64{
		"p1": {"tes": 0.5, "ei": 0.1, "random": 1}, // ei reaches it, tes does not
		"p2": {"tes": 0.5, "ei": 0.5, "random": 1}, // nobody does
	})
	md := comparisonMarkdown(&s, groupRuns(&s, runs))
	for _, want := range []string{
		"median ≤ 0.2 × random search's: 0 of 2 problems (0%; target ≥ 80%: NOT met); missed on p1, p2",
		"- … by any measured method: 1 of 2 problems; by none on p2\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison.md lacks %q:\n%s", want, md)
		}
	}
}
