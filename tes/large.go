package tes

// largeN is the number of observations from which the proposal takes
// cheaper defaults: one evaluation of α with its gradient costs two
// triangular solves of |B| rows against the n×n factor (~2·|B|·n² flops,
// tens of times the cost at n = 200), so the number of evaluations, not
// their arithmetic, is what can be cut. Below largeN nothing changes (studies
// keep their trials bit for bit).
const largeN = 1024

// largeMaxIter returns the iteration bound of each local search of α for
// n observations given the default maxIter for the batch size: halved
// from largeN on: the halved searches cost markedly fewer evaluations for
// an α within a fraction of a per cent (the best start has converged by
// then, and the extra iterations go into other starts). Measured in
// docs/results/README.md, "Measurements behind the code".
func largeMaxIter(maxIter, n int) int {
	if n < largeN {
		return maxIter
	}
	return max(1, maxIter/2)
}
