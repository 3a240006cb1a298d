package sdk

import (
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

// ReportEvaluate serves an evaluation whose intermediate values go back to
// the host on the stream (see the protocol's ReportEvaluate): the objective
// runs with a Reporter in its context that sends each value and waits for
// the host's decision.
func (o *objectiveServer) ReportEvaluate(stream pb.Objective_ReportEvaluateServer) (err error) {
	defer o.srv.guard("ReportEvaluate", &err)
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	if first.GetEvaluate() == nil {
		return status.Error(codes.InvalidArgument, "ReportEvaluate: the first message carries no evaluation")
	}
	rep := &streamReporter{stream: stream}
	resp, err := o.evaluate(WithReporter(stream.Context(), rep), first.Evaluate)
	if err != nil {
		return err
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	return stream.Send(&pb.ReportFromPlugin{Result: resp})
}

// streamReporter is the Reporter of one ReportEvaluate call: a report is a
// round trip on the stream, one at a time.
type streamReporter struct {
	mu     sync.Mutex
	stream pb.Objective_ReportEvaluateServer
}

// Report implements Reporter.
func (r *streamReporter) Report(step int, value float64) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.stream.Send(&pb.ReportFromPlugin{Intermediate: &pb.IntermediateValue{Step: int64(step), Value: value}})
	if err != nil {
		return false, fmt.Errorf("report step %d to the host: %w", step, err)
	}
	ans, err := r.stream.Recv()
	if err != nil {
		return false, fmt.Errorf("report step %d to the host: %w", step, err)
	}
	if ans.GetError() != "" {
		return false, errors.New(ans.GetError())
	}
	return ans.GetPrune(), nil
}
