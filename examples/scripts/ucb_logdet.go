// An acquisition script: the host maximizes Score over batches of points in
// [0,1]^d. Drop this file into a plugins directory and run
//
//	tesbo-host run --objective synthetic/branin --acq ucb_logdet --plugins DIR
//
// Score is the batch's mean posterior mean plus κ times its information
// gain ½ log det(I + Σ_B/σ_n²) per point, so a batch is rewarded for high
// means and for points the posterior is jointly unsure about (not for
// duplicates).
package scripts

import (
	"math"

	"github.com/tesbo/tesbo/sdk"
)

const kappa = 2.0

// Score returns α(batch) for the posterior p.
func Score(post sdk.Posterior, batch [][]float64) float64 {
	mean, cov := post.MeanCov(batch)
	q := len(batch)
	noise := post.NoiseVar()
	if noise < 1e-6 {
		noise = 1e-6
	}
	// M = I + Σ_B/σ_n², factorized by Cholesky (M is positive definite).
	m := make([][]float64, q)
	for i := range m {
		m[i] = make([]float64, q)
		for j := range m[i] {
			m[i][j] = cov[i][j] / noise
		}
		m[i][i]++
	}
	logdet := 0.0
	for j := 0; j < q; j++ {
		d := m[j][j]
		for k := 0; k < j; k++ {
			d -= m[j][k] * m[j][k]
		}
		if d <= 0 {
			return math.Inf(-1) // numerically singular: worst score
		}
		m[j][j] = math.Sqrt(d)
		logdet += 2 * math.Log(m[j][j])
		for i := j + 1; i < q; i++ {
			s := m[i][j]
			for k := 0; k < j; k++ {
				s -= m[i][k] * m[j][k]
			}
			m[i][j] = s / m[j][j]
		}
	}
	mu := 0.0
	for _, v := range mean {
		mu += v
	}
	return mu/float64(q) + kappa*0.5*logdet/float64(q)
}
