// Command embed shows how to embed the tesbo host in a Go program: define an
// objective (any type with Info and Evaluate), pick options, and call
// host.Optimize — optionally storing the study in a SQLite file so that a
// later run can resume it. A second part drives a study with Ask/Tell, the
// way a program that evaluates points elsewhere (a cluster, a lab) would.
//
//	go run ./examples/embed                       # in memory
//	go run ./examples/embed -db embed.db          # stored; run again to resume
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// sixHump is the (negated) six-hump camel function on [−3,3]×[−2,2]: two
// global maxima f* = 1.0316 at (±0.0898, ∓0.7126).
type sixHump struct{}

func (sixHump) Info(context.Context) (sdk.Info, error) {
	fstar := 1.031628453489877
	return sdk.Info{
		Name:    "six-hump-camel",
		Params:  []sdk.Param{{Name: "x", Kind: sdk.Float, Low: -3, High: 3}, {Name: "y", Kind: sdk.Float, Low: -2, High: 2}},
		Optimum: &fstar,
	}, nil
}

func (sixHump) Evaluate(ctx context.Context, p []float64) (float64, error) {
	x, y := p[0], p[1]
	return -((4-2.1*x*x+x*x*x*x/3)*x*x + x*y + (-4+4*y*y)*y*y), nil
}

func main() {
	acqName := flag.String("acq", "ei", "acquisition (tes-ep, ei, ucb, random, ...)")
	iters := flag.Int("iters", 15, "BO iterations")
	batch := flag.Int("batch", 2, "points per iteration")
	dbPath := flag.String("db", "", "SQLite file to store (and resume) the study in; empty: in memory")
	flag.Parse()
	log := zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr}).With().Timestamp().Logger().Level(zerolog.WarnLevel)

	// Ctrl-C cancels the context: the study stops cleanly and, when stored,
	// can be resumed by running the program again.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	opts := host.Options{
		Acquisition: *acqName,
		Batch:       *batch,
		Iters:       *iters,
		Init:        4,
		Seed:        42,
		Logger:      log,
		OnIteration: func(r host.Record) {
			fmt.Printf("iter %2d  evals %2d  best %.5f at (%.3f, %.3f)  regret %.2e\n",
				r.Iter, r.Evals, deref(r.BestValue), r.BestX[0], r.BestX[1], deref(r.Regret))
		},
	}

	var res *host.Result
	var err error
	if *dbPath == "" {
		res, err = host.Optimize(ctx, sixHump{}, opts)
	} else {
		res, err = runStored(ctx, *dbPath, opts)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
	fmt.Printf("best %.5f at %v after %d evaluations (%s)\n", deref(res.BestValue), res.Best.X, res.Evaluations, res.Elapsed.Round(1e6))

	askTell(ctx, opts)
}

// runStored continues the study "camel" in the database at path, or starts
// it when it is not there yet. Only a missing study is created: a locked or
// corrupt database, or a study of another objective, is an error to report,
// not a reason to start over.
func runStored(ctx context.Context, path string, opts host.Options) (*host.Result, error) {
	db, err := host.OpenStorage(ctx, path, host.StorageOptions{Create: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	opts.DB, opts.Name = db, "camel"
	info, _ := sixHump{}.Info(ctx)
	study, created, err := host.OpenOrCreate(ctx, info, opts)
	switch {
	case errors.Is(err, host.ErrLocked):
		return nil, fmt.Errorf("%w (is another run of this program using %s?)", err, path)
	case errors.Is(err, host.ErrCorrupt), errors.Is(err, host.ErrNotTesbo):
		return nil, fmt.Errorf("%w: remove %s or pass another -db", err, path)
	case err != nil:
		return nil, err
	case !created:
		fmt.Printf("resuming study camel: %d trials so far\n", len(study.Trials()))
	}
	defer study.Close() // releases the study's lease for the next run
	return study.Run(ctx, sixHump{})
}

// askTell evaluates the points itself: Ask for a batch, evaluate it
// anywhere, Tell the values (or the error).
func askTell(ctx context.Context, opts host.Options) {
	info, _ := sixHump{}.Info(ctx)
	opts.OnIteration = nil
	study, err := host.NewStudy(ctx, info, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
	for !study.Done() {
		trials, err := study.Ask(ctx, 0) // the rest of the initial design, then one batch
		if err != nil {
			fmt.Fprintln(os.Stderr, "embed:", err)
			os.Exit(1)
		}
		for _, t := range trials {
			v, err := sixHump{}.Evaluate(ctx, t.X)
			if err := study.Tell(ctx, t.ID, v, err); err != nil {
				fmt.Fprintln(os.Stderr, "embed:", err)
				os.Exit(1)
			}
		}
	}
	best, err := study.Recommend(ctx) // wraps host.ErrNoEvaluations if nothing completed
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed: no recommendation:", err)
		os.Exit(1)
	}
	fmt.Printf("ask/tell: best %.5f at %v (same trials as Optimize with the same seed)\n", *best.Value, best.X)

	// One more point with y pinned (host.Fix): the GP still learns from
	// every trial, the acquisition searches over x alone.
	pinned, err := study.Ask(ctx, 1, host.Fix(map[string]float64{"y": 0.7}))
	if err != nil {
		fmt.Fprintln(os.Stderr, "embed:", err)
		os.Exit(1)
	}
	fmt.Printf("ask/tell: next point with y pinned at 0.7: %v\n", pinned[0].X)
}

func deref(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}
