package loader

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tesbo/tesbo/sdk"
)

// MaxPluginMessage bounds every gRPC message between the host and a
// plugin, both ways: a plugin's answer (an evaluation, a suggested batch,
// a score, its Info) and its requests to the host's Posterior service.
// go-plugin lets a client receive up to 2 GiB, which a misbehaving plugin
// could make the host allocate; the largest legitimate message, a batch of
// MaxBatch points in MaxDim dimensions, is 8 MB.
const MaxPluginMessage = 16 << 20

// boundedConn adds the MaxPluginMessage receive limit to every call made
// over a plugin connection.
type boundedConn struct{ cc grpc.ClientConnInterface }

func (b boundedConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return b.cc.Invoke(ctx, method, args, reply, append(opts, grpc.MaxCallRecvMsgSize(MaxPluginMessage))...)
}

func (b boundedConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return b.cc.NewStream(ctx, desc, method, append(opts, grpc.MaxCallRecvMsgSize(MaxPluginMessage))...)
}

// rpc is the session's connection with the message bound applied.
func (s *session) rpc() grpc.ClientConnInterface { return boundedConn{s.conn.Conn} }

// posteriorBudget bounds the covariance entries the host's Posterior
// service computes at once for one acquisition plugin: two MeanCov calls of
// sdk.MaxPosteriorPoints points (64 MB of covariance between them, a few
// times that while it is computed and encoded); further calls wait.
const posteriorBudget = 2 * sdk.MaxPosteriorPoints * sdk.MaxPosteriorPoints

// checkPosteriorPoints refuses a posterior request for more points than
// sdk.MaxPosteriorPoints, before anything is allocated for it.
func checkPosteriorPoints(n int, op string) error {
	if n <= sdk.MaxPosteriorPoints {
		return nil
	}
	return status.Errorf(codes.InvalidArgument,
		"%s of %d points refused: at most %d per request (sdk.MaxPosteriorPoints; the host computes the answer in its own memory); ask in smaller pieces",
		op, n, sdk.MaxPosteriorPoints)
}

// reserve waits until the budget has room for a request of weight w (its
// covariance entries) and returns the function that gives it back.
func reserve(ctx context.Context, sem *semaphore.Weighted, w int64) (func(), error) {
	w = max(w, 1)
	if err := sem.Acquire(ctx, w); err != nil {
		return nil, status.FromContextError(fmt.Errorf("waiting for the host's posterior: %w", err)).Err()
	}
	return func() { sem.Release(w) }, nil
}
