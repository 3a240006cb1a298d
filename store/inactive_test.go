package store

import (
	"context"
	"math"
	"testing"
)

// NaN coordinates (the inactive parameters of a conditional space) are
// stored as null and read back as NaN, in every store (TestPostgres runs
// it on PostgreSQL); ±Inf is refused.
func TestInactiveCoordinatesRoundTrip(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	nan := math.NaN()
	for name, st := range map[string]Storage{"sqlite": d, "memory": NewMemory()} {
		s := newStudy(t, d, "c-"+name)
		if name == "memory" {
			if err := st.CreateStudy(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		tr := []Trial{{ID: 0, X: []float64{1, nan, 3}, U: []float64{0.5, 0.5, 0.25}}}
		if err := st.AddBatch(ctx, s.ID, Iteration{Iteration: 0}, tr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := st.Trials(ctx, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		x := got[0].X
		if len(x) != 3 || x[0] != 1 || !math.IsNaN(x[1]) || x[2] != 3 {
			t.Fatalf("%s: read back %v", name, x)
		}
		bad := []Trial{{ID: 1, Index: 1, X: []float64{math.Inf(1), 0, 0}, U: []float64{0, 0, 0}}}
		if err := st.AddBatch(ctx, s.ID, Iteration{Iteration: 0}, bad); err == nil {
			t.Fatalf("%s: an infinite coordinate was stored", name)
		}
	}
}
