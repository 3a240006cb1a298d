package loader

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/testenv"
)

// neighbourPlugins are the two kinds of plugin process whose calls share
// a process: a Go executable and a script, both with 1.5 s healthy
// evaluations and a region (x ≥ 5/6) where they hang.
func neighbourPlugins(t *testing.T) map[string]string {
	return map[string]string{
		"go":     pluginsDir(t, []string{"neighbours"}, nil),
		"script": pluginsDir(t, nil, map[string]string{"neighbours.go": "testdata/scripts/neighbours.go"}),
	}
}

// TestNeighboursOfATimeout: a call that times out kills its process and
// the healthy calls running beside it with it; they fail with
// ErrNeighbourFault (matched by Error.NeighbourFault), not as crashes of
// their own, and complete when re-run.
func TestNeighboursOfATimeout(t *testing.T) {
	for kind, dir := range neighbourPlugins(t) {
		t.Run(kind, func(t *testing.T) {
			r, o := generousObjective(t, dir, "neighbours")
			r.opts.EvalTimeout = 2 * time.Second
			ctx := ctxT(t)
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					x := 0.9 // hangs; killed at 2 s
					if i > 0 {
						time.Sleep(time.Second) // healthy, running from 1 s to 2.5 s
						x = 0.1
					}
					_, errs[i] = o.Evaluate(ctx, []float64{x})
				}()
			}
			wg.Wait()
			wantErr(t, errs[0], "neighbours", ErrTimeout, "no answer within 2s")
			for _, err := range errs[1:] {
				wantErr(t, err, "neighbours", ErrNeighbourFault, "another call", "timed out", "can be re-run")
				var nf host.NeighbourFaulter
				if !errors.As(err, &nf) || !nf.NeighbourFault() {
					t.Fatalf("%v does not report NeighbourFault", err)
				}
				if errors.Is(err, ErrExited) {
					t.Fatalf("a neighbour's failure matches ErrExited: %v", err)
				}
			}
			if v, err := o.Evaluate(ctx, []float64{0.1}); err != nil || v != 0.1 {
				t.Fatalf("re-run: %v, %v", v, err)
			}
		})
	}
}

// TestStudySurvivesNeighbourTimeout runs a study with --retries 0 on both
// kinds of plugin: the one evaluation that hangs fails with a timeout, and
// every healthy evaluation killed with it is re-run (not counted as an
// attempt) and completes.
func TestStudySurvivesNeighbourTimeout(t *testing.T) {
	for kind, dir := range neighbourPlugins(t) {
		t.Run(kind, func(t *testing.T) {
			r := open(t, dir, Options{EvalTimeout: 2 * time.Second})
			o, err := r.Objective(ctxT(t), "neighbours")
			if err != nil {
				t.Fatal(err)
			}
			var logs testenv.SyncBuffer
			// 6 initial points, 3 at a time: the hanging one runs beside
			// healthy evaluations that start after it and are still running
			// when it times out, wherever the design puts it but last.
			// The host gets the same 2 s limit as the loader, as the CLI's
			// --eval-timeout gives both: the host must not count the
			// restart of the process a re-run waits for (on a loaded CI
			// machine a healthy re-run once exceeded 2 s with it).
			res, err := host.Optimize(ctxT(t), o, host.Options{
				Init: 6, Parallel: 3, Iters: 1, Seed: 1, Retries: 0,
				EvalTimeout: 2 * time.Second, Proposer: lowProposer{},
				Logger: zerolog.New(&logs),
			})
			if err != nil {
				t.Fatal(err)
			}
			failed := 0
			for _, tr := range res.Trials {
				switch {
				case tr.U[0] >= 5.0/6:
					failed++
					if tr.Status != host.Failed || !strings.Contains(tr.Error, "timed out") {
						t.Fatalf("hanging trial %d: %v %q", tr.ID, tr.Status, tr.Error)
					}
				case tr.Status != host.Complete || tr.Attempts != 1:
					t.Fatalf("healthy trial %d (x=%v): %v after %d attempts: %s", tr.ID, tr.U, tr.Status, tr.Attempts, tr.Error)
				}
			}
			if failed != 1 {
				t.Fatalf("%d trials in the hanging region, want 1", failed)
			}
			if !strings.Contains(logs.String(), "re-running") {
				t.Fatalf("no healthy evaluation was killed with the hanging one (the test's premise); logs:\n%s", logs.String())
			}
		})
	}
}

// lowProposer proposes a point in the healthy region.
type lowProposer struct{}

func (lowProposer) Propose(_ context.Context, s *acq.State, q int) (*mat.Dense, error) {
	X := mat.NewDense(q, s.GP.Dim(), nil)
	for i := range q {
		X.Set(i, 0, 0.05*float64(i+1))
	}
	return X, nil
}

// EvalLimits reports the loader's call limit and its start-up allowance.
func TestEvalLimits(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{"neighbours.go": "testdata/scripts/neighbours.go"})
	r := open(t, dir, Options{EvalTimeout: 3 * time.Second, StartTimeout: 5 * time.Second, SetupTimeout: 7 * time.Second})
	o, err := r.Objective(ctxT(t), "neighbours")
	if err != nil {
		t.Fatal(err)
	}
	if call, startup := o.EvalLimits(); call != 3*time.Second || startup != 12*time.Second {
		t.Fatalf("EvalLimits() = %v, %v; want 3s, 12s", call, startup)
	}
}
