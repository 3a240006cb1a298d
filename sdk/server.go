package sdk

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tesbo/tesbo/internal/pluginwire"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// server holds what one plugin process serves: objectives by name, or a
// suggester, or an acquisition.
type server struct {
	objectives  map[string]Objective
	suggester   Suggester
	acquisition Acquisition

	broker *plugin.GRPCBroker
	log    hclog.Logger

	mu        sync.Mutex
	conns     map[uint32]*grpc.ClientConn // broker connections to the host's Posterior
	summaries summaryCache
	outputs   map[string]bool // objective name → its last Info declared Outputs (Info records it)
}

// guard turns a panic in plugin code into a gRPC Internal error (the stack
// goes to the plugin's log) so one bad call does not kill the process.
func (s *server) guard(op string, err *error) {
	if r := recover(); r != nil {
		if pe, ok := r.(posteriorPanic); ok {
			*err = status.Errorf(codes.Aborted, "%s: posterior callback failed: %v", op, pe.err)
			return
		}
		if s.log != nil {
			s.log.Error("panic in plugin", "op", op, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
		*err = status.Errorf(codes.Internal, "%s panicked: %v", op, r)
	}
}

// toStatus keeps gRPC statuses and context errors recognizable on the host.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}

type describeServer struct {
	pb.UnimplementedPluginServer
	srv *server
}

func (d *describeServer) Describe(context.Context, *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	s := d.srv
	switch {
	case s.objectives != nil:
		names := make([]string, 0, len(s.objectives))
		for n := range s.objectives {
			names = append(names, n)
		}
		sort.Strings(names)
		return &pb.DescribeResponse{Kind: pb.Kind_KIND_OBJECTIVE, Objectives: names}, nil
	case s.suggester != nil:
		return &pb.DescribeResponse{Kind: pb.Kind_KIND_SUGGESTER}, nil
	case s.acquisition != nil:
		return &pb.DescribeResponse{Kind: pb.Kind_KIND_ACQUISITION}, nil
	}
	return nil, status.Error(codes.FailedPrecondition, "plugin serves nothing")
}

type objectiveServer struct {
	pb.UnimplementedObjectiveServer
	srv *server
}

func (o *objectiveServer) lookup(name string) (Objective, error) {
	obj, ok := o.srv.objectives[name]
	if !ok || obj == nil {
		names := make([]string, 0, len(o.srv.objectives))
		for n := range o.srv.objectives {
			names = append(names, fmt.Sprintf("%q", n))
		}
		sort.Strings(names)
		return nil, status.Errorf(codes.NotFound, "no objective %q (this plugin serves %v)", name, names)
	}
	return obj, nil
}

func (o *objectiveServer) Info(ctx context.Context, req *pb.InfoRequest) (resp *pb.ObjectiveInfo, err error) {
	defer o.srv.guard("Info", &err)
	obj, err := o.lookup(req.Objective)
	if err != nil {
		return nil, err
	}
	info, err := obj.Info(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	if _, multi := obj.(MultiOutput); len(info.Outputs) > 0 && !multi {
		if _, detailed := obj.(Detailed); !detailed {
			return nil, status.Errorf(codes.FailedPrecondition, "objective %q declares Outputs but implements neither sdk.MultiOutput (EvaluateOutputs) nor sdk.Detailed", req.Objective)
		}
	}
	o.srv.recordOutputs(req.Objective, info)
	resp = infoToProto(info)
	_, resp.Configurable = obj.(Configurable)
	_, resp.Detailed = obj.(Detailed)
	_, resp.NoiseFree = obj.(NoiseFree)
	resp.Reports = true
	return resp, nil
}

func (o *objectiveServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (_ *pb.ConfigureResponse, err error) {
	defer o.srv.guard("Configure", &err)
	obj, err := o.lookup(req.Objective)
	if err != nil {
		return nil, err
	}
	c, ok := obj.(Configurable)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "objective %q does not implement sdk.Configurable", req.Objective)
	}
	if err := c.Configure(ctx, req.Params); err != nil {
		return nil, toStatus(err)
	}
	return &pb.ConfigureResponse{}, nil
}

func (o *objectiveServer) Evaluate(ctx context.Context, req *pb.EvaluateRequest) (_ *pb.EvaluateResponse, err error) {
	defer o.srv.guard("Evaluate", &err)
	return o.evaluate(ctx, req)
}

// evaluate runs the evaluation req asks for.
func (o *objectiveServer) evaluate(ctx context.Context, req *pb.EvaluateRequest) (*pb.EvaluateResponse, error) {
	obj, err := o.lookup(req.Objective)
	if err != nil {
		return nil, err
	}
	if m, ok := obj.(MultiOutput); ok && req.Mode == pb.EvaluateMode_EVALUATE_MODE_DETAIL && o.srv.declaresOutputs(ctx, req.Objective, obj) {
		// As embedded (host.pool.call): EvaluateOutputs first, whether or
		// not the objective is also Detailed.
		outs, err := m.EvaluateOutputs(ctx, req.X)
		if err != nil {
			return nil, toStatus(err)
		}
		return &pb.EvaluateResponse{Outputs: outs}, nil
	}
	switch req.Mode {
	case pb.EvaluateMode_EVALUATE_MODE_DETAIL:
		if d, ok := obj.(Detailed); ok {
			r, err := d.EvaluateDetail(ctx, req.X)
			if err != nil {
				return nil, toStatus(err)
			}
			return &pb.EvaluateResponse{Value: r.Value, Meta: validUTF8(r.Meta), Outputs: r.Outputs}, nil
		}
	case pb.EvaluateMode_EVALUATE_MODE_NOISE_FREE:
		nf, ok := obj.(NoiseFree)
		if !ok {
			return nil, status.Errorf(codes.Unimplemented, "objective %q does not implement sdk.NoiseFree", req.Objective)
		}
		v, err := nf.EvaluateNoiseFree(ctx, req.X)
		if err != nil {
			return nil, toStatus(err)
		}
		return &pb.EvaluateResponse{Value: v}, nil
	}
	if m, ok := obj.(MultiOutput); ok {
		outs, err := m.EvaluateOutputs(ctx, req.X)
		if err != nil {
			return nil, toStatus(err)
		}
		return &pb.EvaluateResponse{Outputs: outs}, nil
	}
	v, err := obj.Evaluate(ctx, req.X)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.EvaluateResponse{Value: v}, nil
}

// validUTF8 returns m with invalid UTF-8 in its keys and values replaced
// by U+FFFD: protobuf strings must be valid UTF-8, and the evaluation
// would otherwise fail as a whole with gRPC's marshaling error, which
// names no key.
func validUTF8(m map[string]string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			if out == nil {
				out = maps.Clone(m)
			}
			delete(out, k)
			out[strings.ToValidUTF8(k, "\uFFFD")] = strings.ToValidUTF8(v, "\uFFFD")
		}
	}
	if out == nil {
		return m
	}
	return out
}

// recordOutputs notes whether objective name's Info declares several
// outputs, for declaresOutputs. The host asks for the Info before it
// evaluates, and again after every Configure (which may change it).
func (s *server) recordOutputs(name string, info Info) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.outputs == nil {
		s.outputs = map[string]bool{}
	}
	s.outputs[name] = len(info.Outputs) > 0
}

// declaresOutputs reports whether objective name declares several
// outputs: as its last Info served said, else (no Info served yet) by
// asking it once. An evaluation does not ask for the Info again.
func (s *server) declaresOutputs(ctx context.Context, name string, obj Objective) bool {
	s.mu.Lock()
	multi, known := s.outputs[name]
	s.mu.Unlock()
	if known {
		return multi
	}
	info, err := obj.Info(ctx)
	if err != nil {
		return false
	}
	s.recordOutputs(name, info)
	return len(info.Outputs) > 0
}

type suggesterServer struct {
	pb.UnimplementedSuggesterServer
	srv *server
}

func (g *suggesterServer) Suggest(ctx context.Context, req *pb.SuggestRequest) (_ *pb.SuggestResponse, err error) {
	defer g.srv.guard("Suggest", &err)
	sreq := SuggestRequest{
		Objective: infoFromProto(req.Objective),
		History:   observationsFromProto(req.History),
		Pending:   pluginwire.PointsFromProto(req.Pending),
		Count:     int(req.Count),
		Iter:      int(req.Iter),
		Seed:      req.Seed,
	}
	pts, err := g.srv.suggester.Suggest(ctx, sreq)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.SuggestResponse{Points: pluginwire.PointsToProto(pts)}, nil
}

type acquisitionServer struct {
	pb.UnimplementedAcquisitionServer
	srv *server
}

func (a *acquisitionServer) Score(ctx context.Context, req *pb.ScoreRequest) (_ *pb.ScoreResponse, err error) {
	defer a.srv.guard("Score", &err)
	conn, err := a.srv.posteriorConn(req.PosteriorBrokerId)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "dial host posterior: %v", err)
	}
	batch := pluginwire.PointsFromProto(req.Batch)
	key := summaryKey{broker: req.PosteriorBrokerId, handle: req.PosteriorHandle}
	post := newRemotePosterior(ctx, pb.NewPosteriorClient(conn), &a.srv.summaries, key, batch, req.BatchPosterior)
	v, err := a.srv.acquisition.Score(ctx, post, batch)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.ScoreResponse{Value: v}, nil
}

// posteriorConn dials (once) the broker stream on which the host serves the
// Posterior service.
func (s *server) posteriorConn(id uint32) (*grpc.ClientConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.conns[id]; ok {
		return c, nil
	}
	if s.broker == nil {
		return nil, errors.New("no go-plugin broker")
	}
	c, err := s.broker.Dial(id)
	if err != nil {
		return nil, err
	}
	if s.conns == nil {
		s.conns = make(map[uint32]*grpc.ClientConn)
	}
	s.conns[id] = c
	return c, nil
}
