package sdk

import (
	"context"
	"fmt"
	"sync"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

// posteriorPanic is what remotePosterior panics with when the host cannot
// answer; the acquisition server recovers it into an error for the call.
type posteriorPanic struct{ err error }

func (p posteriorPanic) Error() string { return p.err.Error() }

// remotePosterior implements Posterior inside an acquisition plugin by
// calling the host's Posterior service back over the go-plugin broker.
type remotePosterior struct {
	ctx    context.Context
	client pb.PosteriorClient
	handle uint64

	once    sync.Once
	summary *pb.PosteriorSummary
	obs     []Observation
}

func newRemotePosterior(ctx context.Context, c pb.PosteriorClient, handle uint64) *remotePosterior {
	return &remotePosterior{ctx: ctx, client: c, handle: handle}
}

func (r *remotePosterior) load() *pb.PosteriorSummary {
	r.once.Do(func() {
		s, err := r.client.Summary(r.ctx, &pb.PosteriorRequest{Handle: r.handle})
		if err != nil {
			panic(posteriorPanic{fmt.Errorf("summary: %w", err)})
		}
		r.summary = s
		r.obs = ObservationsFromProto(s.Observations)
	})
	if r.summary == nil {
		panic(posteriorPanic{fmt.Errorf("summary unavailable")})
	}
	return r.summary
}

func (r *remotePosterior) Dim() int                    { return int(r.load().Dim) }
func (r *remotePosterior) NoiseVar() float64           { return r.load().NoiseVar }
func (r *remotePosterior) Incumbent() float64          { return r.load().Incumbent }
func (r *remotePosterior) Observations() []Observation { r.load(); return r.obs }

func (r *remotePosterior) MeanVar(x []float64) (float64, float64) {
	resp, err := r.client.MeanCov(r.ctx, &pb.MeanCovRequest{Handle: r.handle, Points: []*pb.Point{{X: x}}, VarianceOnly: true})
	if err != nil {
		panic(posteriorPanic{fmt.Errorf("mean/variance: %w", err)})
	}
	if len(resp.Mean) != 1 || len(resp.Cov) != 1 {
		panic(posteriorPanic{fmt.Errorf("mean/variance: host returned %d means and %d variances for 1 point", len(resp.Mean), len(resp.Cov))})
	}
	return resp.Mean[0], resp.Cov[0]
}

func (r *remotePosterior) MeanCov(points [][]float64) ([]float64, [][]float64) {
	resp, err := r.client.MeanCov(r.ctx, &pb.MeanCovRequest{Handle: r.handle, Points: PointsToProto(points)})
	if err != nil {
		panic(posteriorPanic{fmt.Errorf("mean/covariance: %w", err)})
	}
	n := len(points)
	if len(resp.Mean) != n || len(resp.Cov) != n*n {
		panic(posteriorPanic{fmt.Errorf("mean/covariance: host returned %d means and %d covariances for %d points", len(resp.Mean), len(resp.Cov), n)})
	}
	cov := make([][]float64, n)
	for i := range cov {
		cov[i] = resp.Cov[i*n : (i+1)*n : (i+1)*n]
	}
	return resp.Mean, cov
}
