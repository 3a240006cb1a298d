package loader

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tesbo/tesbo/internal/pluginwire"
	"github.com/tesbo/tesbo/internal/pluginwire/hostside"
	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// Acquisition is a handle on an acquisition-function plugin (a Score script
// or an sdk.ServeAcquisition binary): a function α(batch) the host
// maximizes. The posterior stays in the host; the plugin calls it back over
// the go-plugin broker. It implements sdk.Acquisition.
type Acquisition struct {
	u *unit

	next    atomic.Uint64
	mu      sync.RWMutex
	handles map[uint64]sdk.Posterior
	budget  *semaphore.Weighted // posteriorBudget
}

func newAcquisition(u *unit) *Acquisition {
	return &Acquisition{u: u, handles: map[uint64]sdk.Posterior{}, budget: semaphore.NewWeighted(posteriorBudget)}
}

// Name is the plugin's name.
func (a *Acquisition) Name() string { return a.u.name }

// Prepare binds a posterior (one BO iteration's) and returns the score
// function the host's optimizer maximizes. Close it when the iteration is
// over.
func (a *Acquisition) Prepare(p sdk.Posterior) *ScoreFunc {
	h := a.next.Add(1)
	a.mu.Lock()
	a.handles[h] = p
	a.mu.Unlock()
	return &ScoreFunc{a: a, handle: h, dim: p.Dim()}
}

// Score binds p for one call; prefer Prepare when scoring many batches
// against the same posterior.
func (a *Acquisition) Score(ctx context.Context, p sdk.Posterior, batch [][]float64) (float64, error) {
	f := a.Prepare(p)
	defer f.Close()
	return f.Score(ctx, batch)
}

// ScoreFunc is an acquisition bound to one posterior.
type ScoreFunc struct {
	a      *Acquisition
	handle uint64
	dim    int
}

// Score returns α(batch) for points in [0,1]^d (one per row). It fails
// with an *Error when the batch is malformed, the plugin fails or times out
// (Options.ScriptTimeout), or the score is NaN or infinite.
func (f *ScoreFunc) Score(ctx context.Context, batch [][]float64) (float64, error) {
	a := f.a
	name := a.u.name
	if len(batch) == 0 {
		return 0, &Error{Plugin: name, Op: "score", Cause: ErrBadInput, Err: errors.New("empty batch")}
	}
	if len(batch) > sdk.MaxPosteriorPoints {
		return 0, &Error{Plugin: name, Op: "score", Cause: ErrBadInput, Err: fmt.Errorf("batch of %d points, more than the %d a posterior request may hold (sdk.MaxPosteriorPoints)", len(batch), sdk.MaxPosteriorPoints)}
	}
	for i, x := range batch {
		if len(x) != f.dim {
			return 0, &Error{Plugin: name, Op: "score", Cause: ErrBadInput, Err: fmt.Errorf("point %d has %d coordinates, the posterior has %d", i, len(x), f.dim)}
		}
		for _, v := range x {
			if !(v >= 0 && v <= 1) {
				return 0, &Error{Plugin: name, Op: "score", Cause: ErrBadInput, Err: fmt.Errorf("point %d %v is not in the unit cube", i, x)}
			}
		}
	}
	pre, err := f.a.batchPosterior(f.handle, batch)
	if err != nil {
		return 0, &Error{Plugin: name, Op: "score", Cause: ErrBadInput, Err: err}
	}
	var v float64
	p := a.u.proc
	err = p.call(ctx, "score", a.u.r.opts.scriptTimeout(), func(ctx context.Context, s *session) error {
		id := a.serve(s)
		resp, err := pb.NewAcquisitionClient(s.rpc()).Score(ctx, &pb.ScoreRequest{
			PosteriorBrokerId: id, PosteriorHandle: f.handle, Batch: pluginwire.PointsToProto(batch),
			BatchPosterior: pre,
		})
		if err != nil {
			return err
		}
		v = resp.GetValue()
		return nil
	})
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, &Error{Plugin: name, Op: "score", Cause: ErrBadValue, Err: fmt.Errorf("α(%v) = %v", batch, v)}
	}
	return v, nil
}

// batchPosterior computes the batch's joint posterior to send along with
// the Score request (most acquisitions ask for exactly that first).
func (a *Acquisition) batchPosterior(h uint64, batch [][]float64) (resp *pb.MeanCovResponse, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("host posterior panicked: %v", r)
		}
	}()
	a.mu.RLock()
	p, ok := a.handles[h]
	a.mu.RUnlock()
	if !ok {
		return nil, errors.New("the ScoreFunc was closed")
	}
	return meanCov(p, batch)
}

// meanCov flattens p.MeanCov(pts) into the protocol message.
func meanCov(p sdk.Posterior, pts [][]float64) (*pb.MeanCovResponse, error) {
	mean, cov := p.MeanCov(pts)
	n := len(pts)
	flat := make([]float64, 0, n*n)
	for _, row := range cov {
		flat = append(flat, row...)
	}
	if len(mean) != n || len(flat) != n*n {
		return nil, fmt.Errorf("host posterior returned %d means and %d covariances for %d points", len(mean), len(flat), n)
	}
	return &pb.MeanCovResponse{Mean: mean, Cov: flat}, nil
}

// Close releases the posterior.
func (f *ScoreFunc) Close() {
	f.a.mu.Lock()
	delete(f.a.handles, f.handle)
	f.a.mu.Unlock()
}

// serve starts, once per plugin process, the Posterior service on a broker
// stream and returns its id.
func (a *Acquisition) serve(s *session) uint32 {
	s.postOnce.Do(func() {
		s.postID = s.conn.Broker.NextId()
		srv := &posteriorServer{a: a}
		go s.conn.Broker.AcceptAndServe(s.postID, func(opts []grpc.ServerOption) *grpc.Server {
			g := grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(MaxPluginMessage))...)
			pb.RegisterPosteriorServer(g, srv)
			return g
		})
	})
	return s.postID
}

// posteriorServer answers an acquisition plugin's posterior queries.
type posteriorServer struct {
	pb.UnimplementedPosteriorServer
	a *Acquisition
}

func (ps *posteriorServer) lookup(h uint64) (sdk.Posterior, error) {
	ps.a.mu.RLock()
	defer ps.a.mu.RUnlock()
	p, ok := ps.a.handles[h]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "posterior %d is not bound (the ScoreFunc was closed)", h)
	}
	return p, nil
}

// guard turns a panic of the host's Posterior implementation into an error.
func guard(err *error) {
	if r := recover(); r != nil {
		*err = status.Errorf(codes.Internal, "host posterior panicked: %v", r)
	}
}

func (ps *posteriorServer) Summary(_ context.Context, req *pb.PosteriorRequest) (_ *pb.PosteriorSummary, err error) {
	defer guard(&err)
	p, err := ps.lookup(req.Handle)
	if err != nil {
		return nil, err
	}
	return &pb.PosteriorSummary{
		Dim:          int32(p.Dim()),
		NoiseVar:     p.NoiseVar(),
		Incumbent:    p.Incumbent(),
		Observations: hostside.ObservationsToProto(p.Observations()),
		Categories:   categoriesToProto(sdk.Categories(p)),
	}, nil
}

// MeanCov answers a plugin's MeanCov (or, VarianceOnly, batched MeanVar)
// call. The plugin chooses the number of points, and the answer is
// computed in the host's memory: more than sdk.MaxPosteriorPoints are
// refused, and the covariance entries computed at once for one plugin are
// bounded (posteriorBudget).
func (ps *posteriorServer) MeanCov(ctx context.Context, req *pb.MeanCovRequest) (_ *pb.MeanCovResponse, err error) {
	defer guard(&err)
	p, err := ps.lookup(req.Handle)
	if err != nil {
		return nil, err
	}
	n := len(req.Points)
	op, weight := "MeanCov", int64(n)*int64(n)
	if req.VarianceOnly {
		op, weight = "MeanVar", int64(n)
	}
	if err := checkPosteriorPoints(n, op); err != nil {
		return nil, err
	}
	pts := pluginwire.PointsFromProto(req.Points)
	d := p.Dim()
	for i, x := range pts {
		if len(x) != d {
			return nil, status.Errorf(codes.InvalidArgument, "point %d has %d coordinates, the posterior has %d", i, len(x), d)
		}
	}
	release, err := reserve(ctx, ps.a.budget, weight)
	if err != nil {
		return nil, err
	}
	defer release()
	if req.VarianceOnly {
		resp := &pb.MeanCovResponse{Mean: make([]float64, len(pts)), Cov: make([]float64, len(pts))}
		for i, x := range pts {
			if err := ctx.Err(); err != nil {
				return nil, status.FromContextError(err).Err()
			}
			resp.Mean[i], resp.Cov[i] = p.MeanVar(x)
		}
		return resp, nil
	}
	resp, err := meanCov(p, pts)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return resp, nil
}

var _ sdk.Acquisition = (*Acquisition)(nil)

// categoriesToProto converts a Posterior's choice counts for its summary.
func categoriesToProto(c []int) []int32 {
	if c == nil {
		return nil
	}
	out := make([]int32, len(c))
	for i, n := range c {
		out[i] = int32(n)
	}
	return out
}
