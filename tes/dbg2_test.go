package tes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tesbo/tesbo/acq"
)

func TestDbgIters(t *testing.T) {
	for _, tc := range []struct{ q, n, d int }{{20, 200, 2}, {40, 400, 6}} {
		g := toyGP(t, 7, tc.n, tc.d, 0.25, 1e-4)
		rng := rand.New(rand.NewPCG(1, 2))
		t0 := time.Now()
		m, err := NewModel(context.Background(), g, rng, max(5, tc.q), nil, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println(tc, "prepare", time.Since(t0), "H", m.Entropy())
		f, _ := m.Func(tc.q, nil, rng)
		for _, it := range []int{15, 30, 60} {
			c := &countFunc{f: f}
			t1 := time.Now()
			s := OptimizeDefaults(acq.OptimizeSettings{MaxIter: it}, tc.q)
			x, v, _ := acq.Maximize(context.Background(), c, tc.q, tc.d, s, rand.New(rand.NewPCG(3, 4)))
			a, se, _ := f.Estimate(x)
			fmt.Println("  maxiter", it, "opt", time.Since(t1), "evals", c.nv.Load(), "grads", c.ng.Load(), "alpha", v, a, se)
		}
	}
}
