package bench

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/pareto"
	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/store"
)

// handRegrets recomputes, from a finished run's stored trials and
// iteration records, the regrets multiRegrets reports: per iteration the
// user's rule (the record's Pareto set or best feasible trial) and the
// oracle rule (every complete trial so far), from the problem's noise-free
// outputs, with pareto.Hypervolume for several objectives.
func handRegrets(t *testing.T, out string, spec runSpec, p *testfunc.Multi) (user, oracle map[int]float64) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(filepath.Join(out, DBFile), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := db.Study(ctx, spec.studyName())
	if err != nil {
		t.Fatal(err)
	}
	trials, err := db.Trials(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	its, err := db.Iterations(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	// value is the negated noise-free objectives of a feasible trial.
	value := func(tr store.Trial) ([]float64, bool) {
		f, err := p.Eval(tr.X)
		if err != nil {
			t.Fatal(err)
		}
		y := []float64{}
		for j := range p.Objectives() {
			y = append(y, -f[j])
		}
		return y, p.Feasible(f)
	}
	ref := []float64{}
	for _, r := range p.RefPoint {
		ref = append(ref, -r)
	}
	regret := func(ys [][]float64) float64 {
		if p.Objectives() > 1 {
			return p.MaxHV - pareto.Hypervolume(ys, ref)
		}
		if len(ys) == 0 {
			return math.NaN() // no feasible trial: no regret
		}
		best := math.Inf(-1)
		for _, y := range ys {
			best = math.Max(best, y[0])
		}
		fStar := p.Optimum
		if math.IsNaN(fStar) {
			fStar = 0
		}
		return -best - fStar
	}
	user, oracle = map[int]float64{}, map[int]float64{}
	for _, it := range its {
		if it.Iteration < 1 {
			continue
		}
		var rec host.Record
		if err := json.Unmarshal(it.Record, &rec); err != nil {
			t.Fatal(err)
		}
		var all, kept [][]float64
		for _, tr := range trials {
			if tr.Iteration > it.Iteration || tr.Status != store.Complete {
				continue
			}
			if y, ok := value(tr); ok {
				all = append(all, y)
			}
		}
		oracle[it.Iteration] = regret(all)
		ids := rec.Pareto.Trials
		if p.Objectives() == 1 {
			ids = nil
			if rec.BestFeasible != nil {
				ids = []int{rec.BestFeasible.Trial}
			}
		}
		for _, id := range ids {
			if y, ok := value(trials[id]); ok {
				kept = append(kept, y)
			}
		}
		user[it.Iteration] = regret(kept)
	}
	return user, oracle
}

// TestMultiRegrets runs a tiny suite on a multi-objective and a
// constrained problem and checks runs.csv's regrets against the ones
// computed by hand from the stored trials: hypervolume regret (MaxHV − HV
// of the evaluated Pareto set) and the regret of the best feasible trial.
func TestMultiRegrets(t *testing.T) {
	out := t.TempDir()
	s := Suite{
		Problems:     []Problem{{Name: "synthetic/branincurrin"}, {Name: "synthetic/constrainedgramacy"}, {Name: "synthetic/pressurevessel"}},
		Acquisitions: []string{"parego"},
		Seeds:        1,
		Init:         6,
		Iters:        4,
		Jobs:         1,
		Out:          out,
	}
	rep, err := Run(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if n := rep.Count(StatusDone); n != 3 {
		t.Fatalf("%d runs done, want 3: %+v", n, rep.Runs)
	}
	rows, err := ReadRunsCSV(filepath.Join(out, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sum), "hypervolume regret MaxHV − HV") {
		t.Errorf("summary.md does not say what the several-output regrets are:\n%s", sum)
	}
	for _, spec := range s.specs() {
		p, err := testfunc.NewMulti(spec.Problem.Name[len("synthetic/"):], testfunc.MultiSettings{})
		if err != nil {
			t.Fatal(err)
		}
		user, oracle := handRegrets(t, out, spec, p)
		n := 0
		for _, r := range rows {
			if r.Problem != spec.Problem.Label() {
				continue
			}
			n++
			for _, c := range []struct {
				name string
				got  *float64
				want float64
			}{{"regret", r.Regret, user[r.Iter]}, {"best_eval_regret", r.BestEvalRegret, user[r.Iter]}, {"best_true_regret", r.BestTrueRegret, oracle[r.Iter]}} {
				if math.IsNaN(c.want) {
					if c.got != nil {
						t.Errorf("%s iteration %d: %s %g, want none (no feasible trial)", r.Problem, r.Iter, c.name, *c.got)
					}
					continue
				}
				if c.got == nil || math.Abs(*c.got-c.want) > 1e-9*math.Max(1, math.Abs(c.want)) {
					t.Errorf("%s iteration %d: %s %v, want %g", r.Problem, r.Iter, c.name, c.got, c.want)
				}
			}
			if r.BestTrueRegret != nil && r.BestEvalRegret != nil && (*r.BestTrueRegret > *r.BestEvalRegret+1e-12 || *r.BestTrueRegret < 0) {
				t.Errorf("%s iteration %d: oracle regret %g not in [0, user's %g]", r.Problem, r.Iter, *r.BestTrueRegret, *r.BestEvalRegret)
			}
		}
		// The run must have found something, or the check is vacuous.
		if fin := user[4]; !(fin > 0) || (p.Objectives() > 1 && !(fin < p.MaxHV)) || math.IsInf(fin, 0) {
			t.Errorf("%s: final regret %g: nothing dominated the reference point or no feasible trial", spec.Problem.Label(), fin)
		}
		t.Logf("%s: final regret %g (user's rule), %g (oracle)", spec.Problem.Label(), user[4], oracle[4])
		if n != 4 {
			t.Errorf("%s: %d rows, want 4", spec.Problem.Label(), n)
		}
	}
}

// TestMultiRegretsRules checks multiRegrets on hand-made trials of
// ConstrainedGramacy: the user's rule keeps the record's best feasible
// trial even when a better one was evaluated, gives no regret while that
// trial is infeasible noise-free or there is none, and the oracle takes
// the best noise-free feasible trial so far.
func TestMultiRegretsRules(t *testing.T) {
	p, err := testfunc.NewMulti("constrainedgramacy", testfunc.MultiSettings{})
	if err != nil {
		t.Fatal(err)
	}
	good := []float64{0.1954, 0.4044} // near the optimum 0.5998 (feasible)
	fair := []float64{0.6067, 0.8458} // feasible, f = 1.4525
	bad := []float64{0.3440, 0.1791}  // infeasible
	for _, x := range [][]float64{good, fair} {
		if f, _ := p.Eval(x); !p.Feasible(f) {
			t.Fatalf("%v is infeasible: %v", x, f)
		}
	}
	if f, _ := p.Eval(bad); p.Feasible(f) {
		t.Fatalf("%v is feasible: %v", bad, f)
	}
	trials := []store.Trial{
		{ID: 0, Iteration: 0, X: bad, Status: store.Complete},
		{ID: 1, Iteration: 1, X: fair, Status: store.Complete},
		{ID: 2, Iteration: 2, X: good, Status: store.Complete},
		{ID: 3, Iteration: 3, X: good, Status: store.Failed},
	}
	rows := []row{{Iter: 1}, {Iter: 2}, {Iter: 3}}
	judged := []*multiJudged{{bestFeasible: 0}, {bestFeasible: 1}, {bestFeasible: -1}}
	if err := multiRegrets(p, trials, rows, judged); err != nil {
		t.Fatal(err)
	}
	f := func(x []float64) float64 { y, _ := p.Eval(x); return y[0] - p.Optimum }
	check := func(name string, got *float64, want float64) {
		t.Helper()
		if math.IsNaN(want) {
			if got != nil {
				t.Errorf("%s = %g, want none", name, *got)
			}
			return
		}
		if got == nil || math.Abs(*got-want) > 1e-12 {
			t.Errorf("%s = %v, want %g", name, got, want)
		}
	}
	nan := math.NaN()
	check("user's rule, iteration 1 (judged trial infeasible)", rows[0].BestEvalRegret, nan)
	check("oracle, iteration 1", rows[0].BestTrueRegret, f(fair))
	check("user's rule, iteration 2 (judged: the fair one)", rows[1].BestEvalRegret, f(fair))
	check("oracle, iteration 2", rows[1].BestTrueRegret, f(good))
	check("user's rule, iteration 3 (none judged feasible)", rows[2].Regret, nan)
	check("oracle, iteration 3 (the failed trial does not count)", rows[2].BestTrueRegret, f(good))
}
