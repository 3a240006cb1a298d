package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems"
	"github.com/tesbo/tesbo/sdk"
)

// resolveParams merges each problem's own parameters with the suite's
// (for objectives that accept them) and checks them on a probe instance, so
// that a bad parameter stops the suite before any run starts.
func (s *Suite) resolveParams(ctx context.Context) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	used := map[string]bool{}
	for _, p := range s.Problems {
		obj, _, err := s.opener()(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		params := map[string]string{}
		for k, v := range p.Params {
			if k != KeyNoiseVar {
				params[k] = v
			}
		}
		keyed, hasKeys := obj.(problems.Keyed)
		for k, v := range s.Params {
			if _, own := params[k]; own {
				continue // the problem's own value wins
			}
			if hasKeys && !slices.Contains(keyed.Keys(), k) {
				continue
			}
			params[k] = v
			used[k] = true
		}
		for k := range p.Params {
			used[k] = true
		}
		o := s.studyOptions(runSpec{Problem: p, Batch: 1}, params)
		if err := host.ConfigureObjective(ctx, obj, p.Name, o); err != nil {
			return nil, fmt.Errorf("problem %s: %w", p.Label(), err)
		}
		info, err := obj.Info(ctx)
		if err != nil {
			return nil, fmt.Errorf("problem %s: info: %w", p.Label(), err)
		}
		if info.Optimum == nil && len(info.Outputs) == 0 { // several outputs: hypervolume or best feasible regrets (multi.go)
			s.Logger.Warn().Str("problem", p.Label()).Msg("objective declares no optimum f*: its regret columns stay empty")
		}
		if err := s.checkStudies(ctx, p, params, info); err != nil {
			return nil, err
		}
		out[p.Label()] = params
	}
	for k := range s.Params {
		if !used[k] {
			return nil, fmt.Errorf("parameter %s is accepted by none of the problems", k)
		}
	}
	return out, nil
}

// checkStudies makes, in memory, the study of every acquisition and batch
// size of the suite on problem p, so that a setting a study refuses (a
// batch above an acquisition's limit, an acquisition the problem's outputs
// cannot take) is bad input before anything runs or is written, as it is
// for 'run'.
func (s *Suite) checkStudies(ctx context.Context, p Problem, params map[string]string, info sdk.Info) error {
	for _, a := range s.Acquisitions {
		for _, q := range s.batches() {
			o := s.studyOptions(runSpec{Problem: p, Acquisition: a, Batch: q}, params)
			o.Name, o.Logger = "", zerolog.Nop()
			if _, err := host.NewStudy(ctx, info, o); err != nil {
				return fmt.Errorf("problem %s, acquisition %s, batch %d: %w", p.Label(), a, q, err)
			}
		}
	}
	return nil
}
