package loader

import (
	"context"
	"errors"
	"fmt"
	"math"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// reportEvaluate runs req on the plugin's ReportEvaluate stream, passing
// each intermediate value the plugin reports to rep and the decision back.
// A value rep refuses (a step out of order, say) goes back to the plugin as
// an error for its sdk.Report to return.
func reportEvaluate(ctx context.Context, c pb.ObjectiveClient, req *pb.EvaluateRequest, rep sdk.Reporter) (*pb.EvaluateResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.ReportEvaluate(ctx)
	if err != nil {
		return nil, err
	}
	if err := stream.Send(&pb.ReportToPlugin{Evaluate: req}); err != nil {
		return nil, err
	}
	for {
		m, err := stream.Recv()
		if status.Code(err) == codes.Unimplemented {
			return nil, &Error{Op: "evaluate", Cause: ErrRemote, Err: errors.New("the plugin declares that it reports intermediate values (ObjectiveInfo.reports) but does not serve Objective.ReportEvaluate: serve it, or declare reports false")}
		}
		if err != nil {
			return nil, err
		}
		if m.GetResult() != nil {
			return m.GetResult(), nil
		}
		iv := m.GetIntermediate()
		if iv == nil {
			return nil, errors.New("ReportEvaluate: the plugin sent neither an intermediate value nor a result")
		}
		ans := &pb.ReportToPlugin{}
		step := iv.GetStep()
		if step < math.MinInt32 || step > math.MaxInt32 {
			ans.Error = fmt.Sprintf("report: step %d is out of range", step)
		} else if prune, err := rep.Report(int(step), iv.GetValue()); err != nil {
			ans.Error = err.Error()
		} else {
			ans.Prune = prune
		}
		if err := stream.Send(ans); err != nil {
			return nil, err
		}
	}
}
