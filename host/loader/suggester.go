package loader

import (
	"context"
	"fmt"
	"math"

	"github.com/tesbo/tesbo/internal/pluginwire"
	"github.com/tesbo/tesbo/internal/pluginwire/hostside"
	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// Suggester is a handle on a batch-proposing plugin (sdk.ServeSuggester).
// It implements sdk.Suggester and checks what the plugin returns.
type Suggester struct {
	u *unit
}

// Name is the plugin's name.
func (g *Suggester) Name() string { return g.u.name }

// Suggest asks the plugin for req.Count points and checks that it returned
// exactly that many, each inside the objective's space.
func (g *Suggester) Suggest(ctx context.Context, req sdk.SuggestRequest) ([][]float64, error) {
	op := "suggest"
	if err := req.Objective.Validate(); err != nil {
		return nil, &Error{Plugin: g.u.name, Op: op, Cause: ErrBadInput, Err: err}
	}
	if req.Count <= 0 {
		return nil, &Error{Plugin: g.u.name, Op: op, Cause: ErrBadInput, Err: fmt.Errorf("count %d, want > 0", req.Count)}
	}
	msg := &pb.SuggestRequest{
		Objective: hostside.InfoToProto(req.Objective),
		History:   hostside.ObservationsToProto(req.History),
		Pending:   pluginwire.PointsToProto(req.Pending),
		Count:     int32(req.Count),
		Iter:      int32(req.Iter),
		Seed:      req.Seed,
	}
	var resp *pb.SuggestResponse
	p := g.u.proc
	err := p.call(ctx, op, g.u.evalTimeout(), func(ctx context.Context, s *session) error {
		var err error
		resp, err = pb.NewSuggesterClient(s.rpc()).Suggest(ctx, msg)
		return err
	})
	if err != nil {
		return nil, err
	}
	pts := pluginwire.PointsFromProto(resp.GetPoints())
	if len(pts) != req.Count {
		return nil, &Error{Plugin: g.u.name, Op: op, Cause: ErrBadOutput, Err: fmt.Errorf("asked for %d points, got %d", req.Count, len(pts))}
	}
	space := sdk.Space(req.Objective.Params)
	for i, x := range pts {
		for j, a := range space.Active(x) {
			if !a {
				x[j] = math.NaN() // an inactive parameter: whatever the suggester put there
			}
		}
		if err := checkPoint(req.Objective, x); err != nil {
			return nil, &Error{Plugin: g.u.name, Op: op, Cause: ErrBadOutput, Err: fmt.Errorf("point %d: %v", i, err)}
		}
		if !space.Contains(x) {
			return nil, &Error{Plugin: g.u.name, Op: op, Cause: ErrBadOutput, Err: fmt.Errorf("point %d %v lies outside the space", i, x)}
		}
	}
	return pts, nil
}

var _ sdk.Suggester = (*Suggester)(nil)
