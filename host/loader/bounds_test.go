package loader

import (
	"context"
	"math"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// TestPosteriorRequestBound: a script asking the host for the joint
// posterior of more than sdk.MaxPosteriorPoints points (which once had the
// host allocate its n×n covariance, 13 GB at 20,000 points) gets a refusal
// it can recover from, or else its Score call fails with a message naming
// the bound; the host computes nothing for it and the plugin keeps working.
func TestPosteriorRequestBound(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{"bigcov.go": "testdata/scripts/bigcov.go", "ucb.go": "testdata/scripts/acq.go"})
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	a, err := r.Acquisition(ctx, "bigcov")
	if err != nil {
		t.Fatal(err)
	}
	post := countingPost{fakePost: testPost, limit: sdk.MaxPosteriorPoints, t: t}
	v, err := a.Score(ctx, post, [][]float64{{0.25, 0.5}})
	if err != nil || v != -1 {
		t.Fatalf("recovering script: %v, %v; want -1 (the refusal recovered)", v, err)
	}
	_, err = a.Score(ctx, post, [][]float64{{0.75, 0.5}})
	wantErr(t, err, "bigcov", ErrRemote, "3000 points refused", "at most 2000", "MaxPosteriorPoints")
	if v, err := a.Score(ctx, post, [][]float64{{0.25, 0.5}}); err != nil || v != -1 {
		t.Fatalf("after the failed call: %v, %v", v, err)
	}
}

// countingPost fails the test when asked for more than limit points.
type countingPost struct {
	fakePost
	limit int
	t     *testing.T
}

func (c countingPost) MeanCov(pts [][]float64) ([]float64, [][]float64) {
	if len(pts) > c.limit {
		c.t.Errorf("the host computed MeanCov of %d points", len(pts))
	}
	return c.fakePost.MeanCov(pts)
}

// TestPosteriorServerBounds: the host's Posterior service refuses, before
// decoding or computing anything, requests over sdk.MaxPosteriorPoints
// points, joint or variance-only, as a compiled plugin could send them; a
// request at the bound is answered.
func TestPosteriorServerBounds(t *testing.T) {
	a := newAcquisition(&unit{name: "x"})
	post := countingPost{fakePost: testPost, limit: sdk.MaxPosteriorPoints, t: t}
	f := a.Prepare(post)
	defer f.Close()
	ps := &posteriorServer{a: a}
	points := func(n int) []*pb.Point {
		out := make([]*pb.Point, n)
		for i := range out {
			out[i] = &pb.Point{X: []float64{0.5, 0.5}}
		}
		return out
	}
	for _, varOnly := range []bool{false, true} {
		_, err := ps.MeanCov(context.Background(), &pb.MeanCovRequest{Handle: f.handle, Points: points(sdk.MaxPosteriorPoints + 1), VarianceOnly: varOnly})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "MaxPosteriorPoints") {
			t.Fatalf("variance only %v: %d points: %v, want InvalidArgument naming the bound", varOnly, sdk.MaxPosteriorPoints+1, err)
		}
		resp, err := ps.MeanCov(context.Background(), &pb.MeanCovRequest{Handle: f.handle, Points: points(sdk.MaxPosteriorPoints), VarianceOnly: varOnly})
		if err != nil || len(resp.Mean) != sdk.MaxPosteriorPoints {
			t.Fatalf("variance only %v: %d points: %v", varOnly, sdk.MaxPosteriorPoints, err)
		}
	}
	// The host's own batch is bounded the same way.
	batch := make([][]float64, sdk.MaxPosteriorPoints+1)
	for i := range batch {
		batch[i] = []float64{0.5, 0.5}
	}
	_, err := f.Score(context.Background(), batch)
	wantErr(t, err, "x", ErrBadInput, "MaxPosteriorPoints")
}

// TestPluginMessageBound: an answer larger than MaxPluginMessage (here a
// script's Info with a 20 MiB name; go-plugin would take up to 2 GiB) is
// refused with a message naming the bound.
func TestPluginMessageBound(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{"hugeinfo.go": "testdata/scripts/hugeinfo.go"})
	r := open(t, dir, Options{})
	_, err := r.Objective(ctxT(t), "hugeinfo")
	wantErr(t, err, "hugeinfo", ErrBadOutput, "MaxPluginMessage", "16 MiB")
}

// TestLargeBatchReachesPlugin: a Score request for a batch of the host's
// largest size (host.MaxBatch = 1000 points, whose joint posterior alone is
// 8 MB) reaches a compiled acquisition plugin; gRPC's default receive
// limit of 4 MiB had the plugin refuse it.
func TestLargeBatchReachesPlugin(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"acquisition"}, nil), Options{})
	ctx := ctxT(t)
	a, err := r.Acquisition(ctx, "acquisition")
	if err != nil {
		t.Fatal(err)
	}
	batch := make([][]float64, 1000)
	for i := range batch {
		batch[i] = []float64{float64(i) / 1000, 0.5}
	}
	v, err := a.Score(ctx, testPost, batch)
	if want := wantUCB(testPost, batch); err != nil || math.Abs(v-want) > 1e-9*math.Abs(want) {
		t.Fatalf("Score of 1000 points = %v, %v; want %v", v, err, want)
	}
}
