package acq

import (
	"fmt"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// SampleAt writes len(dst) joint samples of f at the rows of X from g's
// posterior N(μ_X, K_X|D) into dst[s][off : off+rows(X)], escalating a
// diagonal jitter (1e-10 … 1e-2) until the covariance factorizes.
func SampleAt(g *gp.GP, X *mat.Dense, dst [][]float64, off int, rng *rand.Rand) error {
	mean, cov := g.Joint(X)
	L, err := cholJitter(cov)
	if err != nil {
		return err
	}
	n := len(mean)
	z := make([]float64, n)
	for _, row := range dst {
		for i := range z {
			z[i] = rng.NormFloat64()
		}
		for i := 0; i < n; i++ {
			v := mean[i]
			for j := 0; j <= i; j++ {
				v += L.At(i, j) * z[j]
			}
			row[off+i] = v
		}
	}
	return nil
}

// cholJitter returns the lower Cholesky factor of cov (modified in place by
// the jitter it needed).
func cholJitter(cov *mat.SymDense) (*mat.TriDense, error) {
	n := cov.SymmetricDim()
	var ch mat.Cholesky
	jit := 1e-10
	for !ch.Factorize(cov) {
		if jit > 1e-2 {
			return nil, fmt.Errorf("posterior covariance is not positive definite even with jitter")
		}
		for i := 0; i < n; i++ {
			cov.SetSym(i, i, cov.At(i, i)+jit)
		}
		jit *= 10
	}
	var L mat.TriDense
	ch.LTo(&L)
	return &L, nil
}

// CheckMulti validates what the several-output acquisitions rely on; name
// prefixes its errors.
func CheckMulti(name string, s *MultiState, q int) error {
	switch {
	case s == nil || len(s.Outputs) == 0:
		return fmt.Errorf("%s needs a study with several outputs (declare them in the objective's Info)", name)
	case s.Rand == nil:
		return fmt.Errorf("%s: the state has no random stream", name)
	case q < 1:
		return fmt.Errorf("%s: batch size %d must be positive", name, q)
	case s.X == nil || s.Y == nil:
		return fmt.Errorf("%s: the state has no evaluated points", name)
	}
	d := -1
	for _, o := range s.Outputs {
		if o.GP == nil || o.ToModel == nil || o.ToValue == nil {
			return fmt.Errorf("%s: output %q has no GP or unit maps", name, o.Name)
		}
		if d < 0 {
			d = o.GP.Dim()
		}
		if o.GP.Dim() != d {
			return fmt.Errorf("%s: the outputs' GPs differ in dimension", name)
		}
	}
	return nil
}

// kindsOf returns the indices of the objective and the constraint outputs
// and each constraint's threshold in model units.
func kindsOf(s *MultiState) (obj, con []int, thr []float64) {
	for k, o := range s.Outputs {
		if o.Kind == Constraint {
			con = append(con, k)
			thr = append(thr, o.ToModel(0))
		} else {
			obj = append(obj, k)
		}
	}
	return obj, con, thr
}

// needsOutputs is the error the several-output acquisitions give when the
// host calls them on a single-output study.
func needsOutputs(name string) error {
	return fmt.Errorf("%s needs a study with several outputs (objectives and/or constraints declared in the objective's Info); use tes, ei or qei for one output", name)
}
