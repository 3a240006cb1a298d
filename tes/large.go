package tes

// largeN is the number of observations from which the proposal takes
// cheaper defaults: at n = 2000 one evaluation of α with its gradient
// costs two triangular solves of |B| rows against the n×n factor
// (~2·|B|·n² flops, 20–70 ms for |B| = 20 on the 2-core test machine,
// against ~1 ms at n = 200), so the number of evaluations, not their
// arithmetic, is what can be cut. Below largeN nothing changes (studies
// keep their trials bit for bit).
const largeN = 1024

// largeMaxIter returns the iteration bound of each local search of α for
// n observations given the default maxIter for the batch size: halved
// from largeN on. At n = 2000, d = 6, |B| = 20 the 60-iteration searches
// took 161 evaluations with the gradient and the 30-iteration ones 99, for
// an α 0.5% lower (1.738 against 1.747; the best start had converged by
// then, and the extra iterations went into another start that ended lower).
func largeMaxIter(maxIter, n int) int {
	if n < largeN {
		return maxIter
	}
	return max(1, maxIter/2)
}
