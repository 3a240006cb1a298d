package tes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// TestFuncGradient checks ∂α/∂X of the full acquisition (mixture gradient
// chained through gp's PredictVJP) against central finite differences, for
// both methods (TES_sp with both kinds of sample sets) and for q = 1
// (quadrature), 2 (quadrature) and 4 (Monte Carlo), with and without
// pending points.
func TestFuncGradient(t *testing.T) {
	g := toyGP(t, 1, 10, 2, 0.3, 1e-3)
	for _, set := range []Settings{
		{Method: EP},
		{Method: SP, SPSamples: 40},
		{Method: SP, SPSamples: 40, Sampling: grouping},
	} {
		method := set.Method
		rng := rand.New(rand.NewPCG(41, uint64(method)+uint64(set.Sampling)))
		m, err := NewModel(context.Background(), g, rng, 5, nil, set)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			q       int
			pending bool
		}{{1, false}, {2, false}, {4, false}, {2, true}} {
			var pend *mat.Dense
			if tc.pending {
				pend = randBatch(rng, 1, 2)
			}
			f, err := m.Func(tc.q, pend, rng)
			if err != nil {
				t.Fatal(err)
			}
			// Points near X* so that α and its gradient are not ≈ 0.
			X := mat.NewDense(tc.q, 2, nil)
			for i := 0; i < tc.q; i++ {
				for j := 0; j < 2; j++ {
					X.Set(i, j, clamp01(m.XStar.At(i%m.XStar.RawMatrix().Rows, j)+0.05*rng.NormFloat64()))
				}
			}
			grad := mat.NewDense(tc.q, 2, nil)
			v := f.Eval(X, grad)
			if math.Abs(v-f.Eval(X, nil)) > 1e-12 {
				t.Fatalf("%v q=%d: value depends on whether the gradient is requested", method, tc.q)
			}
			checkFuncGrad(t, fmt.Sprintf("%v q=%d pending=%v", method, tc.q, tc.pending), f, X, grad)
		}
	}
}

// TestInterfaces pins the acq interfaces Func implements and checks that
// EvalSample with fresh base points is an unbiased estimate of α: its mean
// over draws agrees with a high-sample evaluation within 3 SE.
func TestInterfaces(t *testing.T) {
	var _ acq.Func = (*Func)(nil)
	var _ acq.Differentiable = (*Func)(nil)
	var _ acq.Starter = (*Func)(nil)
	var _ acq.Stochastic = (*Func)(nil)
	var _ acq.Scorer = (*scorer)(nil)
	var _ acq.Proposer = (*proposer)(nil)

	_, ep, _ := models(t, 91)
	rng := rand.New(rand.NewPCG(91, 92))
	f, err := ep.Func(3, nil, rng)
	if err != nil {
		t.Fatal(err)
	}
	X := nearXStar(rng, ep, 3, 0.05)
	vals := make([]float64, 40)
	for i := range vals {
		vals[i] = f.EvalSample(X, nil, rng)
	}
	mean, se := meanSE(vals)
	ep.settings.BaseSamples = 20000
	ref, err := ep.Func(3, nil, rng)
	ep.settings.BaseSamples = 0
	if err != nil {
		t.Fatal(err)
	}
	a, seRef, _ := ref.Estimate(X)
	if math.Abs(mean-a) > 3*math.Hypot(se, seRef) {
		t.Errorf("EvalSample mean %.4f ± %.4f vs α %.4f ± %.4f", mean, se, a, seRef)
	}
}

// TestStartsBatch: the batch starts of §4.3 — the first is the q most
// probable x* (exactly, then perturbed copies cycling through X* in the
// same order once q > |X*|), the other two hold perturbed x* (5% of a
// length-scale), every entry in [0,1]; a start for another q is refused.
func TestStartsBatch(t *testing.T) {
	_, ep, _ := models(t, 71)
	rng := rand.New(rand.NewPCG(72, 73))
	xs := ep.XStar
	k, d := xs.Dims()
	p := ep.Probs.P
	// Perturbed coordinates lie within 6 SD (0.05 ℓ each) of their source.
	near := func(row []float64, i int) bool {
		for c := 0; c < d; c++ {
			if math.Abs(row[c]-xs.At(i, c)) > 6*0.05*ep.ell[c] {
				return false
			}
		}
		return true
	}
	byProb := make([]int, k)
	for i := range byProb {
		byProb[i] = i
	}
	sort.SliceStable(byProb, func(a, b int) bool { return p[byProb[a]] > p[byProb[b]] })
	for _, q := range []int{3, 2 * k} {
		f, err := ep.Func(q, nil, rng)
		if err != nil {
			t.Fatal(err)
		}
		if s := f.Starts(q + 1); s != nil {
			t.Errorf("q=%d: Starts(%d) = %d batches, want none", q, q+1, len(s))
		}
		starts := f.Starts(q)
		if len(starts) != 3 {
			t.Fatalf("q=%d: %d starts, want 3", q, len(starts))
		}
		for r := 0; r < q; r++ {
			row := starts[0].RawRowView(r)
			want := byProb[r%k] // the (r mod |X*|)-th most probable x*
			if r < k {
				for c := 0; c < d; c++ {
					if row[c] != xs.At(want, c) {
						t.Fatalf("q=%d: first start row %d = %v, want x*_%d = %v", q, r, row, want, xs.RawRowView(want))
					}
				}
			} else if !near(row, want) {
				t.Errorf("q=%d: first start row %d = %v, not a small perturbation of x*_%d = %v", q, r, row, want, xs.RawRowView(want))
			}
		}
		for b, s := range starts {
			for r := 0; r < q; r++ {
				row := s.RawRowView(r)
				ok := false
				for i := 0; i < k && !ok; i++ {
					ok = near(row, i)
				}
				if !ok {
					t.Errorf("q=%d: start %d row %d = %v is near no x*", q, b, r, row)
				}
				for _, v := range row {
					if v < 0 || v > 1 {
						t.Errorf("q=%d: start %d row %d = %v outside [0,1]", q, b, r, row)
					}
				}
			}
		}
	}
}
