package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// BenchmarkQueuePostgres measures lease+report round trips of 16 workers
// (goroutines, one holder each) on one study in PostgreSQL with a trivial
// objective; b.N trials are queued first. Reports round trips per second.
func BenchmarkQueuePostgres(b *testing.B) {
	pg := testenv.StartPostgres(b)
	ctx := context.Background()
	d, err := Open(pg.NewDatabase(b), Options{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	s := &Study{Name: "q", Objective: "o", Acquisition: "random", Space: []byte(`[]`), Settings: []byte(`{}`)}
	if err := d.CreateStudy(ctx, s); err != nil {
		b.Fatal(err)
	}
	trials := make([]Trial, b.N)
	for i := range trials {
		trials[i] = Trial{ID: i, Index: i, X: []float64{0.5}, U: []float64{0.5}}
	}
	if err := d.AddBatch(ctx, s.ID, Iteration{}, trials); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			h := NewHolder()
			for {
				t, err := d.LeaseTrial(ctx, s.ID, h, time.Minute)
				if err != nil {
					b.Error(err)
					return
				}
				if t == nil {
					return
				}
				t.Status, t.Value = Complete, 1
				if _, err := d.ReportTrial(ctx, s.ID, h, t, 1); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "trips/s")
}
