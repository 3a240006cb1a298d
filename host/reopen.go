package host

// Taking up a reopened study's stored trials and iterations (OpenStudy).

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tesbo/tesbo/store"
)

// loadTrials reads the study's stored trials and takes them up
// (takeTrials).
func (s *Study) loadTrials(ctx context.Context, db store.Storage, id int64) error {
	ts, err := loadTrials(ctx, db, id)
	if err != nil {
		return err
	}
	return s.takeTrials(ts)
}

// takeTrials makes ts, as stored, the study's trials, refusing rows its
// space cannot hold (checkTrials) or IDs with a gap, and counts the
// modelled ones in s.version. Callers hold s.mu once the study is shared.
func (s *Study) takeTrials(ts []Trial) error {
	if err := s.space.checkTrials(ts); err != nil {
		return err
	}
	version := 0
	for i, t := range ts {
		if t.ID != i {
			return fmt.Errorf("trial IDs are not contiguous at %d", i)
		}
		ts[i].Names = s.space.names
		if t.Status.modelled() {
			version++
		}
	}
	s.trials, s.version = ts, version
	return nil
}

// restoreIterations takes up a reopened study's stored iterations: their
// timings and records, the latest fitted model (the next fit's warm
// start) and the latest record. It returns the acquisition's state after
// the latest iteration that stored one (nil if none).
func (s *Study) restoreIterations(its []store.Iteration) (carried json.RawMessage, err error) {
	name := s.name
	var lastRecord json.RawMessage
	for _, it := range its {
		info := &iterInfo{fitS: it.FitSeconds, proposeS: it.ProposeSeconds, recorded: it.Record != nil}
		s.iters[it.Iteration] = info
		s.lastIter = max(s.lastIter, it.Iteration)
		if it.Record != nil && it.Iteration == s.lastIter {
			lastRecord = it.Record
		}
		if it.Model != nil {
			var ms modelState
			if err := json.Unmarshal(it.Model, &ms); err != nil {
				return nil, fmt.Errorf("study %q iteration %d: bad model: %w", name, it.Iteration, err)
			}
			info.fallback = ms.Fallback
			if len(ms.Params) > 0 || len(ms.Outputs) > 0 {
				s.lastModel = &ms
			}
			if len(ms.AcqState) > 0 {
				carried = ms.AcqState
			}
			s.restoreCut(it.Iteration, ms)
		}
	}
	if err := s.restoreLastRecord(lastRecord); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	return carried, nil
}

// restoreCut takes up the points of iteration it's batch that the budget
// left out and that are not yet trials (modelState.Cut; only the last
// iteration's can wait).
func (s *Study) restoreCut(it int, ms modelState) {
	s.cut, s.cutFrom = nil, 0
	if len(ms.Cut) == 0 {
		return
	}
	done := len(s.iterationTrials(it)) - ms.CutFrom
	if done >= 0 && done < len(ms.Cut) {
		s.cut, s.cutFrom = ms.Cut[done:], ms.CutFrom+done
	}
}
