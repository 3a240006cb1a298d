package bigcov

import "github.com/tesbo/tesbo/sdk"

// Score asks for the joint posterior of more points than a request may
// hold (sdk.MaxPosteriorPoints). With the batch's first coordinate below
// 0.5 it recovers the panic the refusal raises and returns -1; otherwise
// the panic fails the call.
func Score(p sdk.Posterior, batch [][]float64) (s float64) {
	if batch[0][0] < 0.5 {
		defer func() {
			if r := recover(); r != nil {
				s = -1
			}
		}()
	}
	pts := make([][]float64, sdk.MaxPosteriorPoints+1000)
	for i := range pts {
		pts[i] = batch[0]
	}
	mean, _ := p.MeanCov(pts)
	return mean[0]
}
