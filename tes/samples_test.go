package tes

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

func symFromRows(r [][]float64) *mat.SymDense {
	n := len(r)
	s := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			s.SetSym(i, j, r[i][j])
		}
	}
	return s
}

// TestSampleSetsAgainstRejection checks E[f_X* | x*] from importance
// sampling and from grouping against rejection sampling, within 3 combined
// standard errors, for every x* (and fails if a grouped set is missing or
// too small to check).
func TestSampleSetsAgainstRejection(t *testing.T) {
	m, k := seKernelPrior(t)
	rng := rand.New(rand.NewPCG(11, 12))
	is, err := importanceSampleSets(rng, m, k, 20000)
	if err != nil {
		t.Fatal(err)
	}
	grp, err := groupedSampleSets(rng, m, k, 100000)
	if err != nil {
		t.Fatal(err)
	}
	if len(is) != len(m) {
		t.Fatalf("importance sampling returned %d sets, want %d", len(is), len(m))
	}
	checked := 0
	for _, set := range grp {
		if set.ess() < 100 {
			continue // too few grouped samples for a meaningful check
		}
		checkSetMean(t, "grouped", rng, m, k, set)
		checked++
	}
	// Every x* of this prior has p(x*) ≥ 5% (TestEPFiveAgainstRejection),
	// so each of the 10⁵ joint samples' groups holds ~5·10³ or more: all
	// |X*| grouped sets must be present and checked, or the test checks
	// nothing about grouping.
	if checked < len(m) {
		t.Errorf("only %d of %d grouped sets (of %d returned) had ESS ≥ 100", checked, len(m), len(grp))
	}
	for _, set := range is {
		checkSetMean(t, "importance", rng, m, k, set)
		if set.ess() < 1000 {
			t.Errorf("x*_%d: importance ESS %.0f of 20000", set.Star, set.ess())
		}
	}
}

func checkSetMean(t *testing.T, name string, rng *rand.Rand, m []float64, k *mat.SymDense, set sampleSet) {
	t.Helper()
	mean, se := set.mean()
	rm, rc, acc := rejectionMoments(t, rng, m, k, set.Star, 300000)
	for i := range mean {
		rse := math.Sqrt(rc[i][i] / float64(acc))
		tol := 3 * math.Sqrt(se[i]*se[i]+rse*rse)
		if math.Abs(mean[i]-rm[i]) > tol {
			t.Errorf("%s x*_%d: E[f_%d] = %.4f ± %.4f, rejection %.4f ± %.4f", name, set.Star, i, mean[i], se[i], rm[i], rse)
		}
	}
}

func TestImportanceSampleSetsTailAndDuplicate(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	// x*_0 far below the others: p(x*_0) ≈ 1e-30, rejection is hopeless but
	// importance sampling still yields finite, normalised weights and
	// samples that satisfy the constraint.
	m := []float64{-8, 0, 0.5}
	k := symFromRows([][]float64{{0.3, 0, 0}, {0, 0.3, 0.1}, {0, 0.1, 0.3}})
	sets, err := importanceSampleSets(rng, m, k, 2000)
	if err != nil {
		t.Fatal(err)
	}
	s0 := sets[0]
	sum := 0.0
	for i, w := range s0.W {
		sum += w
		if s0.F.At(i, 0) < math.Max(s0.F.At(i, 1), s0.F.At(i, 2)) {
			t.Fatalf("sample %d violates f(x*) ≥ f⁺", i)
		}
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("weights sum to %g", sum)
	}
	// Two identical maximizers: neither can strictly dominate; the set for
	// each keeps only samples where it ties, which is all of them (f equal).
	kd := symFromRows([][]float64{{1, 1, 0.3}, {1, 1, 0.3}, {0.3, 0.3, 1}})
	sets, err = importanceSampleSets(rng, []float64{0, 0, -0.2}, kd, 500)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		for _, w := range s.W {
			if math.IsNaN(w) {
				t.Fatalf("x*_%d: NaN weight", s.Star)
			}
		}
	}
}

// TestGroupingDropsUnlikelyMaximizer: with grouped sample sets a maximizer
// that no joint sample picks is dropped (§4.1), the mixture renormalises
// p(x*) over the sets present (reading 3 of the package doc), H(x*) is that of the
// renormalised weights, and α stays in [0, H] with a gradient matching
// central finite differences.
func TestGroupingDropsUnlikelyMaximizer(t *testing.T) {
	// f(0.8) is observed ≈ 0.2 below f(0.2) with posterior SD ≈ 0.03, so
	// x* = 0.8 is the argmax with probability ~5e-7: above MinProb (it is
	// grouping, not the MinProb cut, that drops it) but far below 1/60, the
	// inverse of the number of joint samples.
	pts := mat.NewDense(3, 1, []float64{0.2, 0.5, 0.8})
	g, err := gp.New(gp.NewSE([]float64{0.15}, 1), 1e-3, pts, []float64{1, 0.95, 0.8})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(61, 62))
	m, err := modelAt(context.Background(), g, rng, pts, Settings{Method: SP, Sampling: grouping, SPSamples: 20})
	if err != nil {
		t.Fatal(err)
	}
	p := m.Probs.P
	t.Logf("p = %v, H = %v", p, m.Entropy())
	if !(p[2] >= 1e-8 && p[2] < 1e-3) {
		t.Fatalf("p(x* = 0.8) = %g: the setting no longer isolates the grouping rule", p[2])
	}
	if len(m.Sets) != 2 || m.Sets[0].Star != 0 || m.Sets[1].Star != 1 {
		t.Fatalf("sets for maximizers %v, want [0 1]", starsOf(m.Sets))
	}
	want := []float64{p[0] / (p[0] + p[1]), p[1] / (p[0] + p[1])}
	for i, w := range want {
		if math.Abs(m.sp.PSet[i]-w) > 1e-12 {
			t.Errorf("renormalised p(x*) of set %d = %.15g, want %.15g", i, m.sp.PSet[i], w)
		}
	}
	h := m.Entropy()
	if math.Abs(h-entropy(want)) > 1e-12 {
		t.Errorf("H = %g, want %g (of the renormalised weights)", h, entropy(want))
	}
	f, err := m.Func(1, nil, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []float64{0.05, 0.3, 0.35, 0.5, 0.9} {
		X := mat.NewDense(1, 1, []float64{x})
		grad := mat.NewDense(1, 1, nil)
		a := f.Eval(X, grad)
		if a < -1e-9 || a > h+1e-9 {
			t.Errorf("α(%g) = %g outside [0, H = %g]", x, a, h)
		}
		checkFuncGrad(t, fmt.Sprintf("x = %g", x), f, X, grad)
	}
}

func starsOf(sets []sampleSet) []int {
	s := make([]int, len(sets))
	for i, st := range sets {
		s[i] = st.Star
	}
	return s
}
