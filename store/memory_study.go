package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// The studies of a Memory, and their summaries.

// CreateStudy is DB.CreateStudy.
func (d *Memory) CreateStudy(ctx context.Context, s *Study) error {
	if s.Name == "" {
		return fmt.Errorf("create study: empty name")
	}
	if !json.Valid(s.Space) || !json.Valid(s.Settings) {
		return fmt.Errorf("create study %q: space and settings must be JSON", s.Name)
	}
	now := time.Now()
	err := d.write(ctx, func() error {
		if d.m.byName(s.Name) != nil {
			return fmt.Errorf("study %q %w in %s", s.Name, ErrExists, memoryPath)
		}
		d.m.lastID++
		s.ID = d.m.lastID
		row := *s
		row.Space, row.Settings = cloneRaw(s.Space), cloneRaw(s.Settings)
		row.CreatedAt, row.UpdatedAt = unixTime(now.UnixNano()), unixTime(now.UnixNano())
		d.m.studies = append(d.m.studies, &memStudy{row: row, trials: map[int]*memTrial{}, iters: map[int]*Iteration{}})
		return nil
	})
	if err != nil {
		return fmt.Errorf("create study: %w", err)
	}
	s.CreatedAt, s.UpdatedAt = now, now
	return nil
}

// Study is DB.Study.
func (d *Memory) Study(ctx context.Context, name string) (*Study, error) {
	var out *Study
	err := d.read(ctx, func() error {
		s := d.m.byName(name)
		if s == nil {
			return fmt.Errorf("study %q %w in %s (%s)", name, ErrNotFound, memoryPath, studyList(d.m.names()))
		}
		row := s.row
		row.Space, row.Settings = cloneRaw(s.row.Space), cloneRaw(s.row.Settings)
		out = &row
		return nil
	})
	return out, err
}

func (m *memData) names() []string {
	var names []string
	for _, s := range m.studies {
		names = append(names, s.row.Name)
	}
	return names
}

// StudyNames is DB.StudyNames.
func (d *Memory) StudyNames(ctx context.Context) ([]string, error) {
	var names []string
	err := d.read(ctx, func() error { names = d.m.names(); return nil })
	return names, err
}

// UpdateSettings is DB.UpdateSettings.
func (d *Memory) UpdateSettings(ctx context.Context, studyID int64, settings json.RawMessage) error {
	if !json.Valid(settings) {
		return fmt.Errorf("update settings: not JSON")
	}
	return d.write(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return fmt.Errorf("update settings: study %d %w", studyID, ErrNotFound)
		}
		s.row.Settings, s.row.UpdatedAt = cloneRaw(settings), unixTime(time.Now().UnixNano())
		return nil
	})
}

// Activity is DB.Activity.
func (d *Memory) Activity(ctx context.Context, studyID int64) (Activity, error) {
	var a Activity
	err := d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			a.LastChange = unixTime(0)
			return nil
		}
		last := s.row.CreatedAt.UnixNano()
		for _, t := range s.trials {
			a.Trials++
			a.Attempts += t.attempts
			if t.iteration < 0 && t.status.Done() {
				a.Outside++
			}
			switch t.status {
			case Pending:
				a.Pending++
			case Running:
				a.Running++
			case Complete:
				a.Complete++
				if a.MaxValue == nil {
					maxV, minV := t.value, t.value
					a.MaxValue, a.MinValue = &maxV, &minV
				}
				*a.MaxValue, *a.MinValue = max(*a.MaxValue, t.value), min(*a.MinValue, t.value)
			case Failed:
				a.Failed++
			case Pruned:
				a.Pruned++
			}
			last = max(last, t.created, t.started, t.finished)
		}
		a.LastChange = unixTime(last)
		for _, it := range s.iters {
			a.Iterations++
			if it.Record != nil {
				a.Records++
			}
		}
		return nil
	})
	if err != nil {
		return a, fmt.Errorf("read activity of study %d: %w", studyID, err)
	}
	return a, nil
}

// LatestRecord is DB.LatestRecord.
func (d *Memory) LatestRecord(ctx context.Context, studyID int64) ([]byte, error) {
	var rec []byte
	err := d.read(ctx, func() error {
		s := d.m.byID(studyID)
		if s == nil {
			return nil
		}
		latest := -1
		for n, it := range s.iters {
			if it.Record != nil && n > latest {
				latest = n
			}
		}
		if latest >= 0 {
			rec = append([]byte{}, s.iters[latest].Record...)
		}
		return nil
	})
	return rec, err
}
