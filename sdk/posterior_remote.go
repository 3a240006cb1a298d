package sdk

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/tesbo/tesbo/internal/pluginwire"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// posteriorPanic is what remotePosterior panics with when the host cannot
// answer; the acquisition server recovers it into an error for the call.
type posteriorPanic struct{ err error }

func (p posteriorPanic) Error() string { return p.err.Error() }

// remotePosterior implements Posterior inside an acquisition plugin for one
// Score call: the batch's joint posterior comes with the request, the
// summary (dim, noise, incumbent, data) from a per-handle cache, and
// anything else by calling the host's Posterior service back over the
// go-plugin broker.
type remotePosterior struct {
	ctx    context.Context
	client pb.PosteriorClient
	handle uint64
	cache  *summaryCache
	key    summaryKey

	batch [][]float64
	bmean []float64 // prefetched joint posterior of batch (nil if absent)
	bcov  []float64 // row-major len(batch)²

	summary *cachedSummary
}

func newRemotePosterior(ctx context.Context, c pb.PosteriorClient, cache *summaryCache, key summaryKey, batch [][]float64, pre *pb.MeanCovResponse) *remotePosterior {
	r := &remotePosterior{ctx: ctx, client: c, handle: key.handle, cache: cache, key: key, batch: batch}
	n := len(batch)
	if pre != nil && len(pre.Mean) == n && len(pre.Cov) == n*n {
		r.bmean, r.bcov = pre.Mean, pre.Cov
	}
	return r
}

type summaryKey struct {
	broker uint32
	handle uint64
}

type cachedSummary struct {
	s    *pb.PosteriorSummary
	obs  []Observation
	cats []int // nil without categorical coordinates
}

// summaryCache keeps the summaries of the last few posterior handles (one
// per BO iteration), so Score calls after the first need no callback for
// Dim, NoiseVar, Incumbent or Observations.
type summaryCache struct {
	mu   sync.Mutex
	keys []summaryKey
	vals map[summaryKey]*cachedSummary
}

const summaryCacheSize = 4

func (c *summaryCache) get(k summaryKey) *cachedSummary {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.vals[k]
}

func (c *summaryCache) put(k summaryKey, v *cachedSummary) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vals == nil {
		c.vals = map[summaryKey]*cachedSummary{}
	}
	if _, ok := c.vals[k]; !ok {
		c.keys = append(c.keys, k)
		if len(c.keys) > summaryCacheSize {
			delete(c.vals, c.keys[0])
			c.keys = c.keys[1:]
		}
	}
	c.vals[k] = v
}

func (r *remotePosterior) load() *pb.PosteriorSummary {
	if r.summary == nil {
		r.summary = r.cache.get(r.key)
	}
	if r.summary == nil {
		s, err := r.client.Summary(r.ctx, &pb.PosteriorRequest{Handle: r.handle})
		if err != nil {
			panic(posteriorPanic{fmt.Errorf("summary: %w", err)})
		}
		r.summary = &cachedSummary{s: s, obs: observationsFromProto(s.Observations), cats: categoriesFromProto(s.Categories)}
		r.cache.put(r.key, r.summary)
	}
	return r.summary.s
}

// batchIndex returns i if x is row i of the prefetched batch, else -1.
func (r *remotePosterior) batchIndex(x []float64) int {
	if r.bmean == nil {
		return -1
	}
	for i, b := range r.batch {
		if slices.Equal(b, x) {
			return i
		}
	}
	return -1
}

func (r *remotePosterior) Dim() int          { return int(r.load().Dim) }
func (r *remotePosterior) NoiseVar() float64 { return r.load().NoiseVar }

// Categories implements Categorized from the host's summary.
func (r *remotePosterior) Categories() []int {
	r.load()
	return r.summary.cats
}
func (r *remotePosterior) Incumbent() float64          { return r.load().Incumbent }
func (r *remotePosterior) Observations() []Observation { r.load(); return r.summary.obs }

func (r *remotePosterior) MeanVar(x []float64) (float64, float64) {
	if i := r.batchIndex(x); i >= 0 {
		return r.bmean[i], r.bcov[i*len(r.batch)+i]
	}
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
	if r.bmean != nil && len(points) == len(r.batch) {
		same := true
		for i := range points {
			same = same && slices.Equal(points[i], r.batch[i])
		}
		if same {
			return copyMeanCov(r.bmean, r.bcov, len(points))
		}
	}
	resp, err := r.client.MeanCov(r.ctx, &pb.MeanCovRequest{Handle: r.handle, Points: pluginwire.PointsToProto(points)})
	if err != nil {
		panic(posteriorPanic{fmt.Errorf("mean/covariance: %w", err)})
	}
	n := len(points)
	if len(resp.Mean) != n || len(resp.Cov) != n*n {
		panic(posteriorPanic{fmt.Errorf("mean/covariance: host returned %d means and %d covariances for %d points", len(resp.Mean), len(resp.Cov), n)})
	}
	return copyMeanCov(resp.Mean, resp.Cov, n)
}

// copyMeanCov returns fresh slices (callers may modify them).
func copyMeanCov(mean, flat []float64, n int) ([]float64, [][]float64) {
	m := append([]float64(nil), mean...)
	c := append([]float64(nil), flat...)
	cov := make([][]float64, n)
	for i := range cov {
		cov[i] = c[i*n : (i+1)*n : (i+1)*n]
	}
	return m, cov
}

// categoriesFromProto converts a summary's choice counts (nil when empty).
func categoriesFromProto(c []int32) []int {
	if len(c) == 0 {
		return nil
	}
	out := make([]int, len(c))
	for i, n := range c {
		out[i] = int(n)
	}
	return out
}
