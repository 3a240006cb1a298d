package host

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

// Every record carries the best value observed so far and where: the best
// of the completed trials (largest, or smallest when minimizing), which
// never gets worse from one iteration to the next, unlike the
// recommendation's value.
func TestRecordBestObserved(t *testing.T) {
	for _, minimize := range []bool{false, true} {
		t.Run(fmt.Sprint("minimize=", minimize), func(t *testing.T) {
			info := unitInfo(2)
			info.Minimize = minimize
			obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) {
				return (x[0]-0.3)*(x[0]-0.3) - x[1], nil
			}}
			var recs []Record
			o := Options{Proposer: randomProposer{}, Batch: 2, Iters: 6, Init: 2, Seed: 3,
				OnIteration: func(r Record) { recs = append(recs, r) }}
			res, err := Optimize(context.Background(), obj, o)
			if err != nil {
				t.Fatal(err)
			}
			better := func(a, b float64) bool { return (!minimize && a > b) || (minimize && a < b) }
			for i, r := range recs {
				var want *Trial
				for k := range res.Trials[:r.Evals] {
					if tr := &res.Trials[k]; want == nil || better(tr.Value, want.Value) {
						want = tr
					}
				}
				if r.BestObserved == nil || *r.BestObserved != want.Value || fmt.Sprint(r.BestObservedX) != fmt.Sprint(want.X) {
					t.Fatalf("record %d: best observed %v at %v, want %v at %v", i, r.BestObserved, r.BestObservedX, want.Value, want.X)
				}
				if i > 0 && better(*recs[i-1].BestObserved, *r.BestObserved) {
					t.Fatalf("record %d: best observed went from %v to %v", i, *recs[i-1].BestObserved, *r.BestObserved)
				}
			}
			if res.BestObserved == nil || res.BestObserved.Value != *recs[len(recs)-1].BestObserved {
				t.Fatalf("result's best observed %+v, last record's %v", res.BestObserved, *recs[len(recs)-1].BestObserved)
			}
		})
	}
}

// hugeObjective has values near ±the largest float64 and a noise-free form.
type hugeObjective struct {
	funcObjective
}

func (o hugeObjective) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	return o.f(ctx, x)
}

// Values near ±the largest float64 keep every record finite: the regret
// f* − f saturates at the largest float64 instead of overflowing, and a
// refined recommendation's mean (the record's value where no noise-free
// value is known) stays within the observed range widened
// (dataset.bounds), so the records encode as JSON and the study goes on.
func TestRecordsOfHugeValuesFinite(t *testing.T) {
	t.Run("regret", func(t *testing.T) {
		info := unitInfo(2)
		opt := 1.7e308
		info.Optimum = &opt
		obj := hugeObjective{funcObjective{info, func(_ context.Context, x []float64) (float64, error) {
			return -1.7e308 * (0.5 + x[0]/2), nil
		}}}
		o := baseOptions(5)
		o.Batch, o.Iters = 1, 4
		checkRecordsFinite(t, obj, o, true)
	})
	t.Run("refine", func(t *testing.T) {
		obj := funcObjective{unitInfo(2), func(_ context.Context, x []float64) (float64, error) {
			return math.Copysign(1.7e308, x[0]-0.5), nil
		}}
		o := baseOptions(5)
		o.Batch, o.Iters, o.Acquisition, o.Proposer, o.Recommend = 1, 6, "tes", nil, RecommendRefine
		checkRecordsFinite(t, obj, o, false)
	})
}

// checkRecordsFinite runs obj and checks that every record encodes and
// has a finite best value (and regret, when withRegret).
func checkRecordsFinite(t *testing.T, obj sdk.Objective, o Options, withRegret bool) {
	t.Helper()
	var recs []Record
	o.OnIteration = func(r Record) { recs = append(recs, r) }
	if _, err := Optimize(context.Background(), obj, o); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("iteration %d: %v", r.Iter, err)
		}
		if withRegret && (r.Regret == nil || math.IsInf(*r.Regret, 0)) || r.BestValue == nil || math.IsInf(*r.BestValue, 0) {
			t.Fatalf("iteration %d: regret %v, best value %v", r.Iter, r.Regret, r.BestValue)
		}
	}
}

// A record marks the batch's trials stopped early with their last
// [step, value] (null for the others); a batch without one has no
// "stopped" field.
func TestRecordStopped(t *testing.T) {
	o := pruningOptions()
	var recs []Record
	o.OnIteration = func(r Record) { recs = append(recs, r) }
	res, err := Optimize(context.Background(), curveObjective{steps: 9}, o)
	if err != nil {
		t.Fatal(err)
	}
	marked := 0
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stopped == nil {
			if strings.Contains(string(b), `"stopped"`) {
				t.Fatalf("iteration %d: %s", r.Iter, b)
			}
			continue
		}
		tr := res.Trials[len(res.Trials)-len(recs)+r.Iter-1] // batch 1: one trial per iteration
		last := tr.Intermediates[len(tr.Intermediates)-1]
		if len(r.Stopped) != 1 || r.Stopped[0] == nil || *r.Stopped[0] != [2]float64{float64(last.Step), last.Value} || tr.Status != Pruned {
			t.Fatalf("iteration %d: stopped %v, trial %+v", r.Iter, r.Stopped, tr)
		}
		marked++
	}
	if marked == 0 || marked != res.Pruned {
		t.Fatalf("%d records mark a stopped trial, %d pruned", marked, res.Pruned)
	}
}
