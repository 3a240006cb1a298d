package host

import (
	"context"
	"fmt"
	"testing"
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
