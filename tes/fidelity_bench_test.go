package tes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tesbo/tesbo/acq"
)

// BenchmarkProposeFidelity is one MF-TES proposal of q points on a GP over
// (x, t) with n observations at random fidelities, x in d dimensions.
// The batch is greedy (fidelityQuery): each later point maximizes α with
// the earlier ones pending, a mixture over more dimensions per point, so
// the time grows faster than q (2026-11-29, one core: 0.08 s at q = 1,
// 1.1 s at q = 4, 15 s at q = 10; a joint TES batch of 4 takes 0.1 s).
func BenchmarkProposeFidelity(b *testing.B) {
	for _, q := range []int{1, 4, 10} {
		b.Run(fmt.Sprintf("q=%d/n=40/d=3", q), func(b *testing.B) {
			gt := liftFidelity(b, toyGP(b, 3, 40, 3, 0.3, 1e-3), 0.3, 0.5)
			p, err := acq.Lookup("tes", acq.Options{})
			if err != nil {
				b.Fatal(err)
			}
			fp := p.(acq.FidelityProposer)
			cost := acq.FidelityCost{Steps: 27}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				st := &acq.State{GP: gt, Rand: rand.New(rand.NewPCG(1, uint64(i))), Iter: 3}
				if _, err := fp.ProposeFidelity(context.Background(), st, q, cost); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
