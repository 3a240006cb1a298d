package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Study is a study's configuration row. Space and Settings are JSON
// documents owned by the host (the parameter space and the run options).
type Study struct {
	ID          int64
	Name        string
	Objective   string
	Acquisition string
	Seed        uint64 // stored as the int64 with the same bits
	Space       json.RawMessage
	Settings    json.RawMessage
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// CreateStudy inserts s (its ID and timestamps are filled in). A study of
// the same name gives an error wrapping ErrExists.
func (d *DB) CreateStudy(ctx context.Context, s *Study) error {
	if s.Name == "" {
		return fmt.Errorf("create study: empty name")
	}
	if !json.Valid(s.Space) || !json.Valid(s.Settings) {
		return fmt.Errorf("create study %q: space and settings must be JSON", s.Name)
	}
	now := time.Now()
	err := d.tx(ctx, func(tx *sqlTx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM studies WHERE name=?`, s.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("study %q %w in %s", s.Name, ErrExists, d.path)
		}
		return tx.QueryRowContext(ctx,
			`INSERT INTO studies(name, objective, acquisition, seed, space, settings, created_at, updated_at)
			 VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
			s.Name, s.Objective, s.Acquisition, int64(s.Seed), string(s.Space), string(s.Settings),
			now.UnixNano(), now.UnixNano()).Scan(&s.ID)
	})
	if err != nil {
		return fmt.Errorf("create study: %w", err)
	}
	s.CreatedAt, s.UpdatedAt = now, now
	return nil
}

const studyCols = `id, name, objective, acquisition, seed, space, settings, created_at, updated_at`

func scanStudy(r interface{ Scan(...any) error }) (*Study, error) {
	var s Study
	var seed, created, updated int64
	var space, settings string
	if err := r.Scan(&s.ID, &s.Name, &s.Objective, &s.Acquisition, &seed, &space, &settings, &created, &updated); err != nil {
		return nil, err
	}
	s.Seed = uint64(seed)
	s.Space, s.Settings = json.RawMessage(space), json.RawMessage(settings)
	s.CreatedAt, s.UpdatedAt = time.Unix(0, created), time.Unix(0, updated)
	return &s, nil
}

// maxListed bounds the names a not-found error lists.
const maxListed = 10

// studyList names the studies for a not-found error: quoted (a name may
// hold spaces), at most maxListed of them, and how many more there are.
func studyList(names []string) string {
	if len(names) == 0 {
		return "it holds no study"
	}
	q := make([]string, 0, min(len(names), maxListed))
	for _, n := range names[:min(len(names), maxListed)] {
		q = append(q, strconv.Quote(n))
	}
	s := "studies: " + strings.Join(q, ", ")
	if more := len(names) - len(q); more > 0 {
		s += fmt.Sprintf(" and %d more (tesbo-host serve lists them)", more)
	}
	return s
}

// Study loads the study called name; a missing study gives an error
// wrapping ErrNotFound that lists the studies the file holds.
func (d *DB) Study(ctx context.Context, name string) (*Study, error) {
	notFound := func() error {
		names, _ := d.StudyNames(ctx) // none in an empty file
		return fmt.Errorf("study %q %w in %s (%s)", name, ErrNotFound, d.path, studyList(names))
	}
	if d.version.Load() < 1 { // an empty file awaiting its schema
		return nil, notFound()
	}
	s, err := scanStudy(d.db.QueryRowContext(ctx, `SELECT `+studyCols+` FROM studies WHERE name=?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound()
	}
	if err != nil {
		return nil, fmt.Errorf("load study %q: %w", name, d.classify(err))
	}
	return s, nil
}

// StudyNames lists the studies in the file, oldest first.
func (d *DB) StudyNames(ctx context.Context) ([]string, error) {
	if d.version.Load() < 1 {
		return nil, nil
	}
	rows, err := d.db.QueryContext(ctx, `SELECT name FROM studies ORDER BY id`)
	if err != nil {
		return nil, d.classify(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, d.classify(err)
		}
		names = append(names, n)
	}
	return names, d.classify(rows.Err())
}

// UpdateSettings replaces a study's settings document (e.g. resume with a
// new iteration budget).
func (d *DB) UpdateSettings(ctx context.Context, studyID int64, settings json.RawMessage) error {
	if !json.Valid(settings) {
		return fmt.Errorf("update settings: not JSON")
	}
	return d.tx(ctx, func(tx *sqlTx) error {
		res, err := tx.ExecContext(ctx, `UPDATE studies SET settings=?, updated_at=? WHERE id=?`,
			string(settings), time.Now().UnixNano(), studyID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("update settings: study %d %w", studyID, ErrNotFound)
		}
		return nil
	})
}
