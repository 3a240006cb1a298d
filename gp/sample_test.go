package gp

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// checkMoments compares the empirical mean and covariance of the rows of S
// (N×q) with (mean, cov), with a tolerance of z standard errors estimated
// from the sample itself (valid for any finite-variance distribution).
func checkMoments(t *testing.T, name string, S *mat.Dense, mean []float64, cov *mat.SymDense, z float64) {
	t.Helper()
	N, q := S.Dims()
	m := make([]float64, q)
	for i := 0; i < N; i++ {
		for j := 0; j < q; j++ {
			m[j] += S.At(i, j) / float64(N)
		}
	}
	for j := 0; j < q; j++ {
		var v float64
		for i := 0; i < N; i++ {
			d := S.At(i, j) - m[j]
			v += d * d
		}
		se := math.Sqrt(v/float64(N-1)) / math.Sqrt(float64(N))
		if math.Abs(m[j]-mean[j]) > z*se+1e-12 {
			t.Errorf("%s: mean[%d] = %.5f, exact %.5f, SE %.5f", name, j, m[j], mean[j], se)
		}
	}
	for a := 0; a < q; a++ {
		for b := a; b < q; b++ {
			prods := make([]float64, N)
			var c float64
			for i := 0; i < N; i++ {
				prods[i] = (S.At(i, a) - m[a]) * (S.At(i, b) - m[b])
				c += prods[i]
			}
			c /= float64(N - 1)
			var v float64
			for _, p := range prods {
				d := p - c
				v += d * d
			}
			se := math.Sqrt(v/float64(N-1)) / math.Sqrt(float64(N))
			if math.Abs(c-cov.At(a, b)) > z*se+1e-12 {
				t.Errorf("%s: cov[%d][%d] = %.5f, exact %.5f, SE %.5f", name, a, b, c, cov.At(a, b), se)
			}
		}
	}
}

// Bochner: E_ω[cos(ωᵀΔ)] = k(Δ)/σ_s² for the sampled frequencies. 200,000
// draws give an SE ≤ 0.0016; a wrong spectral density (e.g. Gaussian for
// Matérn) is off by more than 0.03 at these lags.
func TestSampleFrequencies(t *testing.T) {
	rng := newRNG(41)
	const m = 200000
	for _, k := range kernels(2) {
		W := k.SampleFrequencies(rng, m)
		for _, delta := range [][]float64{{0.1, 0}, {0.2, 0.3}, {0.5, 0.1}, {0.05, 0.6}} {
			vals := make([]float64, m)
			var mean float64
			for i := 0; i < m; i++ {
				vals[i] = math.Cos(W.At(i, 0)*delta[0] + W.At(i, 1)*delta[1])
				mean += vals[i] / m
			}
			var v float64
			for _, x := range vals {
				v += (x - mean) * (x - mean)
			}
			se := math.Sqrt(v/(m-1)) / math.Sqrt(m)
			want := k.Eval(delta, []float64{0, 0}) / k.Variance()
			if math.Abs(mean-want) > 4*se {
				t.Errorf("%s Δ=%v: E cos = %.5f, want %.5f (SE %.5f)", kname(k), delta, mean, want, se)
			}
		}
	}
}

func TestSampleJointMoments(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.4}, 1), 10, 0.01, 42)
	X := randDense(newRNG(43), 5, 2)
	mean, cov := g.Joint(X)
	S := g.sampleJoint(newRNG(44), X, 2000)
	checkMoments(t, "SampleJoint", S, mean, cov, 4)
}

// Whole-function samples: 2,000 paths, moments at 5 points vs the exact
// posterior, with m = 100 and only m = 10 features.
//
// Why the tolerance does not depend on m: the prior draw f_prior(x) =
// Σ_j w_j cos(ω_jᵀx + b_j), w_j ~ N(0, 2σ_s²/m), has mean 0 and covariance
// m · (2σ_s²/m) · ½ E_ω[cos(ωᵀ(x−x'))] = k(x, x') exactly for every m
// (Bochner), and the pathwise update is linear in (f_prior, ε), so a path's
// mean and covariance at finite points equal the exact posterior's for
// every m: m introduces no bias to allow for. What m changes is the shape
// of the distribution: given its frequencies and phases a path is Gaussian
// with a random variance (2σ_s²/m) Σ_j cos²(·) whose relative spread is
// O(1/√m), so few-feature paths are heavier-tailed (excess kurtosis O(1/m))
// and the empirical moments scatter more. The tolerance is 4 standard
// errors estimated from the paths themselves (the spread of the values and
// of their products), which already contains that extra scatter; the
// fourth moments stay finite for any m ≥ 1, so with 2,000 paths the
// normal approximation behind "4 SE" holds at m = 10 as well.
func TestSamplePathsMoments(t *testing.T) {
	rng := newRNG(45)
	for _, m := range []int{100, 10} {
		for _, k := range kernels(2) {
			g := testProblem(t, k, 10, 0.01, 46)
			X := randDense(rng, 5, 2)
			mean, cov := g.Joint(X)
			paths, err := g.SamplePaths(rng, 2000, m)
			if err != nil {
				t.Fatal(err)
			}
			S := mat.NewDense(2000, 5, nil)
			for i, p := range paths {
				for j := 0; j < 5; j++ {
					S.Set(i, j, p.Eval(X.RawRowView(j)))
				}
			}
			checkMoments(t, fmt.Sprintf("%s SamplePaths m=%d", kname(k), m), S, mean, cov, 4)
		}
	}
}

func TestSamplePathsErrors(t *testing.T) {
	g := testProblem(t, NewSE([]float64{0.3, 0.4}, 1), 5, 0.01, 47)
	if _, err := g.SamplePaths(newRNG(1), 2, 0); err == nil {
		t.Error("features=0: no error")
	}
	if _, err := g.SamplePaths(nil, 2, 10); err == nil {
		t.Error("nil rng: no error")
	}
}
