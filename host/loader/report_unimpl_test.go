package loader

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

// noReportClient is a plugin that declares reports but does not serve
// ReportEvaluate: its stream answers Unimplemented.
type noReportClient struct{ pb.ObjectiveClient }

func (noReportClient) ReportEvaluate(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[pb.ReportToPlugin, pb.ReportFromPlugin], error) {
	return unimplementedStream{}, nil
}

type unimplementedStream struct{ grpc.ClientStream }

func (unimplementedStream) Send(*pb.ReportToPlugin) error { return nil }
func (unimplementedStream) Recv() (*pb.ReportFromPlugin, error) {
	return nil, status.Error(codes.Unimplemented, "Method not implemented!")
}

// A plugin declaring that it reports intermediate values without serving
// ReportEvaluate gets an error that says so and what to do, not gRPC's
// "Method not implemented!".
func TestReportEvaluateUnimplemented(t *testing.T) {
	_, err := reportEvaluate(context.Background(), noReportClient{}, &pb.EvaluateRequest{}, nil)
	var le *Error
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "does not serve Objective.ReportEvaluate") {
		t.Fatalf("err %v, want the loader's error naming ReportEvaluate", err)
	}
}
