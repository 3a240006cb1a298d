package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

// newDB opens a fresh database: a SQLite file, or while TestPostgres runs
// the suite, a new database on its cluster.
func newDB(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	if pgCluster != nil {
		path = pgCluster.NewDatabase(t)
	}
	d, err := Open(path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, path
}

func newStudy(t *testing.T, d *DB, name string) *Study {
	t.Helper()
	s := &Study{Name: name, Objective: "synthetic/branin", Acquisition: "ei", Seed: math.MaxUint64 - 7,
		Space: json.RawMessage(`[{"name":"x0"}]`), Settings: json.RawMessage(`{"iters":3}`)}
	if err := d.CreateStudy(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStudyRoundTrip(t *testing.T) {
	ctx := context.Background()
	d, path := newDB(t)
	s := newStudy(t, d, "a")
	if err := d.CreateStudy(ctx, &Study{Name: "a", Space: json.RawMessage(`{}`), Settings: json.RawMessage(`{}`)}); !errors.Is(err, ErrExists) {
		t.Fatalf("duplicate study: got %v, want ErrExists", err)
	}
	d.Close()
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got, err := d.Study(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != s.ID || got.Seed != s.Seed || got.Objective != s.Objective || got.Acquisition != s.Acquisition ||
		string(got.Space) != string(s.Space) || string(got.Settings) != string(s.Settings) {
		t.Fatalf("study round trip: got %+v, want %+v", got, s)
	}
	if _, err := d.Study(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing study: got %v", err)
	}
	if err := d.UpdateSettings(ctx, s.ID, json.RawMessage(`{"iters":9}`)); err != nil {
		t.Fatal(err)
	}
	got, _ = d.Study(ctx, "a")
	if string(got.Settings) != `{"iters":9}` {
		t.Fatalf("settings after update: %s", got.Settings)
	}
}

// Points and values must come back bitwise identical (resume determinism
// depends on it).
func TestTrialsBitwise(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	rng := rand.New(rand.NewPCG(1, 2))
	var trials []Trial
	for i := range 50 {
		x := []float64{rng.NormFloat64() * 1e-300, rng.Float64(), math.Nextafter(1, 2), -rng.ExpFloat64() * 1e200}
		trials = append(trials, Trial{ID: i, Iteration: i / 5, Index: i % 5, X: x, U: []float64{rng.Float64(), 0, 1, 0.5}})
	}
	for it := 0; it < 10; it++ {
		if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: it, Model: json.RawMessage(`{"p":[1.5]}`), FitSeconds: 0.5}, trials[it*5:it*5+5]); err != nil {
			t.Fatal(err)
		}
	}
	values := make([]float64, len(trials))
	for i := range trials {
		tr := trials[i]
		if err := d.StartTrial(ctx, s.ID, tr.ID, 1, time.Now()); err != nil {
			t.Fatal(err)
		}
		if i%7 == 3 {
			tr.Status, tr.Error = Failed, "boom"
		} else {
			tr.Status, tr.Value = Complete, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(600)-300))
			tr.Meta = map[string]string{"k": fmt.Sprint(i)}
		}
		values[i] = tr.Value
		tr.Attempts = 2
		if err := d.FinishTrial(ctx, s.ID, &tr); err != nil {
			t.Fatal(err)
		}
	}
	got, err := d.Trials(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(trials) {
		t.Fatalf("got %d trials, want %d", len(got), len(trials))
	}
	for i, g := range got {
		w := trials[i]
		if g.ID != w.ID || g.Iteration != w.Iteration || g.Index != w.Index || g.Attempts != 2 {
			t.Fatalf("trial %d header: got %+v", i, g)
		}
		for j := range w.X {
			if math.Float64bits(g.X[j]) != math.Float64bits(w.X[j]) || math.Float64bits(g.U[j]) != math.Float64bits(w.U[j]) {
				t.Fatalf("trial %d coordinate %d: got %v/%v, want %v/%v", i, j, g.X[j], g.U[j], w.X[j], w.U[j])
			}
		}
		if i%7 == 3 {
			if g.Status != Failed || g.Error != "boom" {
				t.Fatalf("trial %d: got %s %q", i, g.Status, g.Error)
			}
		} else if g.Status != Complete || math.Float64bits(g.Value) != math.Float64bits(values[i]) || g.Meta["k"] != fmt.Sprint(i) {
			t.Fatalf("trial %d: got %s %v %v, want %v", i, g.Status, g.Value, g.Meta, values[i])
		}
	}
	its, err := d.Iterations(ctx, s.ID)
	if err != nil || len(its) != 10 || string(its[3].Model) != `{"p":[1.5]}` || its[3].FitSeconds != 0.5 {
		t.Fatalf("iterations: %v %+v", err, its)
	}
	if err := d.SetRecord(ctx, s.ID, 4, json.RawMessage(`{"iter":4}`)); err != nil {
		t.Fatal(err)
	}
	its, _ = d.Iterations(ctx, s.ID)
	if string(its[4].Record) != `{"iter":4}` || its[3].Record != nil {
		t.Fatalf("records: %s %s", its[4].Record, its[3].Record)
	}
}

func TestTrialTransitions(t *testing.T) {
	ctx := context.Background()
	d, _ := newDB(t)
	s := newStudy(t, d, "a")
	tr := []Trial{{ID: 0, X: []float64{1}, U: []float64{0.5}}}
	if err := d.AddBatch(ctx, s.ID, Iteration{}, tr); err != nil {
		t.Fatal(err)
	}
	// Same IDs again: conflict (another process ran the same study).
	if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, tr); !errors.Is(err, ErrConflict) {
		t.Fatalf("duplicate trial id: got %v, want ErrConflict", err)
	}
	// The failed AddBatch must not have left its iteration row behind.
	if its, _ := d.Iterations(ctx, s.ID); len(its) != 1 {
		t.Fatalf("rolled-back batch left %d iteration rows", len(its))
	}
	bad := Trial{ID: 0, Status: Complete, Value: math.NaN()}
	if err := d.FinishTrial(ctx, s.ID, &bad); err == nil {
		t.Fatal("NaN value accepted")
	}
	done := Trial{ID: 0, Status: Complete, Value: 3}
	if err := d.FinishTrial(ctx, s.ID, &done); err != nil {
		t.Fatal(err)
	}
	if err := d.FinishTrial(ctx, s.ID, &done); !errors.Is(err, ErrConflict) {
		t.Fatalf("finishing twice: got %v, want ErrConflict", err)
	}
	if err := d.StartTrial(ctx, s.ID, 0, 1, time.Now()); !errors.Is(err, ErrConflict) {
		t.Fatalf("starting a finished trial: got %v, want ErrConflict", err)
	}
	unknown := Trial{ID: 42, Status: Failed}
	if err := d.FinishTrial(ctx, s.ID, &unknown); !errors.Is(err, ErrConflict) {
		t.Fatalf("finishing an unknown trial: got %v", err)
	}
}

func fileState(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		m[e.Name()] = b
	}
	return m
}

func sameFiles(t *testing.T, before, after map[string][]byte) {
	t.Helper()
	var names []string
	for n := range after {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(before) != len(after) {
		t.Fatalf("files changed: before %d, after %v", len(before), names)
	}
	for n, b := range before {
		if !bytes.Equal(b, after[n]) {
			t.Fatalf("file %s was modified", n)
		}
	}
}

func TestOpenRejects(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A foreign SQLite database.
	foreign := filepath.Join(dir, "foreign.db")
	{
		db, err := sql.Open("sqlite", foreign)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE t(a)`); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
	// A newer tesbo database.
	newer := filepath.Join(dir, "newer.db")
	{
		d, err := Open(newer, Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.db.Exec(`UPDATE tesbo_meta SET value='99' WHERE key='schema_version'`); err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	// A tesbo database with a damaged page.
	corrupt := filepath.Join(dir, "corrupt.db")
	{
		d, err := Open(corrupt, Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		newStudy(t, d, "a")
		d.Close()
		b, _ := os.ReadFile(corrupt)
		for i := 4096; i < len(b); i++ { // every page after the header page
			b[i] = 0xA5
		}
		os.WriteFile(corrupt, b, 0o644)
	}
	text := write("text.db", []byte("hello, this is not a database at all\n"))
	fifo := filepath.Join(t.TempDir(), "fifo.db") // opening it for reading blocked for good
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		create     bool
		want       error
	}{
		{"not sqlite", text, true, ErrNotTesbo},
		{"foreign sqlite", foreign, true, ErrNotTesbo},
		{"newer schema", newer, false, ErrNewerSchema},
		{"corrupt", corrupt, false, ErrCorrupt},
		{"missing without create", filepath.Join(dir, "missing.db"), false, nil},
		{"missing directory", filepath.Join(dir, "no", "such", "dir.db"), true, nil},
		{"directory", dir, true, nil},
		{"fifo", fifo, true, ErrNotTesbo},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := fileState(t, dir)
			d, err := Open(c.path, Options{Create: c.create})
			if err != nil && c.name == "fifo" {
				_, err = Open(c.path, Options{ReadOnly: true}) // trials, serve
			}
			if err == nil {
				d.Close()
				if c.name == "corrupt" {
					// Damage in data pages may only show on reading a study.
					d, _ = Open(c.path, Options{})
					_, err = d.Study(context.Background(), "a")
					d.Close()
				}
				if err == nil {
					t.Fatal("Open succeeded")
				}
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			sameFiles(t, before, fileState(t, dir))
			t.Log(err)
		})
	}
}

func TestLocked(t *testing.T) {
	_, path := newDB(t)
	holder, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN EXCLUSIVE`); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(context.Background(), `ROLLBACK`)
	d, err := Open(path, Options{BusyTimeout: 50 * time.Millisecond})
	if err == nil {
		err = d.CreateStudy(context.Background(), &Study{Name: "x", Space: json.RawMessage(`[]`), Settings: json.RawMessage(`{}`)})
		d.Close()
	}
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("got %v, want ErrLocked", err)
	}
}

// A version-1 database (before the iterations table) is migrated on Open
// and keeps its data.
func TestMigrateFromV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	writeV1(t, path)
	d, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var v string
	d.db.QueryRow(`SELECT value FROM tesbo_meta WHERE key='schema_version'`).Scan(&v)
	if v != fmt.Sprint(SchemaVersion) {
		t.Fatalf("schema version after migration: %s", v)
	}
	s, err := d.Study(context.Background(), "old")
	if err != nil {
		t.Fatal(err)
	}
	tr, err := d.Trials(context.Background(), s.ID)
	if err != nil || len(tr) != 1 || tr[0].Value != 2.5 {
		t.Fatalf("trials after migration: %v %+v", err, tr)
	}
	if err := d.AddBatch(context.Background(), s.ID, Iteration{Iteration: 1}, nil); err != nil {
		t.Fatalf("iterations table missing after migration: %v", err)
	}
}

// Many studies written from many goroutines through one DB, and a second
// handle on the same file, all land.
func TestConcurrentStudies(t *testing.T) {
	ctx := context.Background()
	d, path := newDB(t)
	d2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := d
			if g%2 == 1 {
				h = d2
			}
			s := &Study{Name: fmt.Sprint("s", g), Space: json.RawMessage(`[]`), Settings: json.RawMessage(`{}`)}
			if err := h.CreateStudy(ctx, s); err != nil {
				errs <- err
				return
			}
			for it := range 10 {
				tr := []Trial{{ID: it, Iteration: it, X: []float64{float64(g)}, U: []float64{0}}}
				if err := h.AddBatch(ctx, s.ID, Iteration{Iteration: it}, tr); err != nil {
					errs <- err
					return
				}
				tr[0].Status, tr[0].Value = Complete, float64(it)
				if err := h.FinishTrial(ctx, s.ID, &tr[0]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	names, _ := d.StudyNames(ctx)
	if len(names) != 8 {
		t.Fatalf("studies: %v", names)
	}
	for _, n := range names {
		s, _ := d.Study(ctx, n)
		tr, _ := d.Trials(ctx, s.ID)
		if len(tr) != 10 || tr[9].Status != Complete {
			t.Fatalf("study %s: %d trials", n, len(tr))
		}
	}
}

// writeV1 makes a version-1 database (before the iterations table) holding
// study "old" with one complete trial.
func writeV1(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(migrations[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO tesbo_meta VALUES ('schema_version','1');
		INSERT INTO studies VALUES (1,'old','o','a',5,'[]','{}',0,0);
		INSERT INTO trials(study_id,id,iteration,batch_index,x,u,status,value,created_at) VALUES (1,0,0,0,'[1]','[0.5]','complete',2.5,0)`); err != nil {
		t.Fatal(err)
	}
}

// With DeferMigration an older database is readable but not written —
// not migrated, not switched to WAL, writes refused — until Migrate, which
// upgrades it keeping its data.
func TestDeferMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "v1.db")
	writeV1(t, path)
	before := fileState(t, dir)

	d, err := Open(path, Options{DeferMigration: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.Study(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	if tr, err := d.Trials(ctx, s.ID); err != nil || len(tr) != 1 || tr[0].Value != 2.5 {
		t.Fatalf("trials before migration: %v %+v", err, tr)
	}
	if its, err := d.Iterations(ctx, s.ID); err != nil || its != nil {
		t.Fatalf("iterations before migration: %v %+v", err, its)
	}
	if names, err := d.StudyNames(ctx); err != nil || len(names) != 1 || names[0] != "old" {
		t.Fatalf("study names: %v %v", names, err)
	}
	if _, err := d.Study(ctx, "missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing study: %v", err)
	}
	if err := d.CreateStudy(ctx, &Study{Name: "new", Space: json.RawMessage(`[]`), Settings: json.RawMessage(`{}`)}); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("CreateStudy before Migrate: %v, want ErrNeedsMigration", err)
	}
	if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, nil); !errors.Is(err, ErrNeedsMigration) {
		t.Fatalf("AddBatch before Migrate: %v, want ErrNeedsMigration", err)
	}
	d.Close()
	sameFiles(t, before, fileState(t, dir))

	d, err = Open(path, Options{DeferMigration: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for range 2 { // the second call has nothing to do
		if err := d.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var v, mode string
	d.db.QueryRow(`SELECT value FROM tesbo_meta WHERE key='schema_version'`).Scan(&v)
	d.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode)
	if v != fmt.Sprint(SchemaVersion) || mode != "wal" {
		t.Fatalf("after Migrate: schema version %s, journal mode %s", v, mode)
	}
	if tr, err := d.Trials(ctx, s.ID); err != nil || len(tr) != 1 || tr[0].Value != 2.5 {
		t.Fatalf("trials after migration: %v %+v", err, tr)
	}
	if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, nil); err != nil {
		t.Fatalf("AddBatch after Migrate: %v", err)
	}
	if its, err := d.Iterations(ctx, s.ID); err != nil || len(its) != 1 {
		t.Fatalf("iterations after migration: %v %+v", err, its)
	}
}

// An empty file opened with DeferMigration stays empty until Migrate; a
// file Open creates gets the schema at once.
func TestDeferMigrationEmptyAndNew(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Open(empty, Options{DeferMigration: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Study(ctx, "x"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("study in an empty file: %v", err)
	}
	if names, err := d.StudyNames(ctx); err != nil || names != nil {
		t.Fatalf("names in an empty file: %v %v", names, err)
	}
	d.Close()
	if st, err := os.Stat(empty); err != nil || st.Size() != 0 {
		t.Fatalf("empty file written: %v %v", st.Size(), err)
	}
	d, err = Open(filepath.Join(dir, "new.db"), Options{Create: true, DeferMigration: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	newStudy(t, d, "a")
}

// A '%' in a file name is a '%': SQLite's file: URI percent-decodes the
// path, and a name holding %41 opened (and created) ...A... instead.
func TestOpenPercentPath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a%41b%2.db")
	d, err := Open(path, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	newStudy(t, d, "s")
	d.Close()
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "a%41b%2.db" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("files %q, want the one named", names)
	}
	r, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Study(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
}

// A stored value no write accepts (NULL or ±Inf on a trial that has a
// value, as only a hand edit leaves) makes loading the trials fail with
// ErrCorrupt: read as 0 or ±Inf it was ranked best and modelled.
func TestTrialValueCorrupt(t *testing.T) {
	ctx := context.Background()
	for _, v := range []string{"NULL", "9e999", "-9e999"} {
		d, path := newDB(t)
		s := newStudy(t, d, "a")
		newPending(t, d, s, 0)
		h := NewHolder()
		tr, err := d.LeaseTrial(ctx, s.ID, h, time.Minute)
		if err != nil || tr == nil {
			t.Fatalf("lease: %v %v", tr, err)
		}
		tr.Status, tr.Value = Complete, 1.5
		if ok, err := d.ReportTrial(ctx, s.ID, h, tr, 1); !ok || err != nil {
			t.Fatalf("report: %v %v", ok, err)
		}
		sq, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sq.Exec(`UPDATE trials SET value=` + v); err != nil {
			t.Fatal(err)
		}
		sq.Close()
		if _, err := d.Trials(ctx, s.ID); !errors.Is(err, ErrCorrupt) {
			t.Errorf("value %s: %v, want ErrCorrupt", v, err)
		}
	}
}
