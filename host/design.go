package host

import (
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distmv"
	"gonum.org/v1/gonum/stat/samplemv"
)

// latinHypercube draws n points in [0,1]^d by Latin hypercube sampling: in
// every coordinate each of the n equal slices holds exactly one point, placed
// uniformly within its slice (McKay et al. 1979). Returned rows are points.
func latinHypercube(n, d int, rng *rand.Rand) *mat.Dense {
	if n == 0 {
		return nil
	}
	X := mat.NewDense(n, d, nil)
	src := rand.NewPCG(rng.Uint64(), rng.Uint64())
	samplemv.LatinHypercube{Q: distmv.NewUnitUniform(d, nil), Src: src}.Sample(X)
	return X
}
