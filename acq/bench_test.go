package acq

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPropose times one proposal (Prepare + inner optimization; GP fit
// excluded, as in the BoTorch comparison of docs/results) for every registered baseline at n ∈ {50, 200}
// observations, d ∈ {2, 6}, |B| ∈ {1, 10}, with the default options
// (512 raw samples, 10 restarts, qEI with 512 QMC samples) and
// OptimizeSettings.Workers = 1, which the inner optimizer and the
// sample-path searches of mes, pes and ts honour. That alone is not one
// core: gp.Predict spreads any prediction of more than one block of 64
// queries (raw samples are scored 128 at a time; MES's Gumbel grid) over
// GOMAXPROCS goroutines. For one-core
// figures set GOMAXPROCS with -cpu 1 and pin the process, e.g.
//
//	taskset -c 1 go test -run '^$' -cpu 1 -bench 'Propose/(ei|ucb)/n=200/d=6/q=1$' ./acq
func BenchmarkPropose(b *testing.B) {
	names := []string{"ei", "pi", "ucb", "mes", "pes", "qei", "qei-cl", "bucb", "lp-ei", "ts", "random"}
	for _, name := range names {
		for _, n := range []int{50, 200} {
			for _, d := range []int{2, 6} {
				for _, q := range []int{1, 10} {
					b.Run(fmt.Sprintf("%s/n=%d/d=%d/q=%d", name, n, d, q), func(b *testing.B) {
						p, err := Lookup(name, Options{Optimize: OptimizeSettings{Workers: 1}})
						if err != nil {
							b.Fatal(err)
						}
						g := fixtureGP(b, n, d, 11)
						s := &State{GP: g, Best: maxY(g), Iter: 10}
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							s.Rand = rand.New(rand.NewPCG(uint64(i), 5))
							if _, err := p.Propose(context.Background(), s, q); err != nil {
								b.Fatal(err)
							}
						}
					})
				}
			}
		}
	}
}
