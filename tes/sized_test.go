package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// The sizing rule weighs g_b − g_{b−1}, a few hundredths of a nat, where
// each fresh Monte-Carlo α carries an error of about 0.03: the increment
// of a batch of 4 over its first 3 points, with g_3 re-estimated on the
// first rows of g_4's base points (sharedPrevGain), tracks a 2^17-sample
// reference far closer than two independent estimates do.
func TestSizedIncrementSharesBasePoints(t *testing.T) {
	ctx := context.Background()
	g := toyGP(t, 7, 30, 3, 0.25, 1e-4)
	m, err := NewModel(ctx, g, rand.New(rand.NewPCG(1, 2)), 5, nil, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	B4 := mat.NewDense(4, 3, nil)
	for i := range 4 {
		copy(B4.RawRowView(i), m.XStar.RawRowView(i))
		B4.Set(i, 0, clamp01(B4.At(i, 0)+0.02))
	}
	B3 := mat.DenseCopyOf(B4.Slice(0, 3, 0, 3))
	estimate := func(s Settings, q int, X *mat.Dense, seed uint64) float64 {
		mm := *m
		mm.settings = s.withDefaults()
		f, err := mm.Func(q, nil, rand.New(rand.NewPCG(seed, 5)))
		if err != nil {
			t.Fatal(err)
		}
		a, _, err := f.Estimate(X)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	big := Settings{BaseSamples: 1 << 17}
	ref := estimate(big, 4, B4, 101) - estimate(big, 3, B3, 102)
	var errOwn, errShared float64
	for seed := range uint64(10) {
		f, err := m.Func(4, nil, rand.New(rand.NewPCG(seed, 5)))
		if err != nil {
			t.Fatal(err)
		}
		a4, _, err := f.Estimate(B4)
		if err != nil {
			t.Fatal(err)
		}
		shared, err := sharedPrevGain(f, B3, math.NaN(), 0)
		if err != nil {
			t.Fatal(err)
		}
		own := estimate(Settings{}, 3, B3, seed+50)
		errOwn += math.Abs(a4 - own - ref)
		errShared += math.Abs(a4 - shared - ref)
	}
	if errShared > errOwn/3 {
		t.Errorf("mean error of the increment %.4f on shared base points, %.4f on independent ones (reference %.4f): want at most a third", errShared/10, errOwn/10, ref)
	}
	t.Logf("reference increment %.4f; mean error %.4f shared, %.4f independent", ref, errShared/10, errOwn/10)
}
