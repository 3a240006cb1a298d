package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// interBits prints intermediate values step by step, values bit for bit.
func interBits(p []Intermediate) string {
	if p == nil {
		return "nil"
	}
	var b strings.Builder
	for _, q := range p {
		fmt.Fprintf(&b, "%d:%016x ", q.Step, math.Float64bits(q.Value))
	}
	return "[" + b.String() + "]"
}

// conformPruned: a pruned trial keeps its last value and its intermediate
// values bit for bit, through FinishTrial and through the worker queue;
// malformed intermediate values are refused.
func conformPruned(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "p")
	var batch []Trial
	for i := range 5 {
		batch = append(batch, Trial{ID: i, Iteration: 0, Index: i, X: []float64{float64(i)}, U: []float64{0.5}})
	}
	tr.must("add", d.AddBatch(ctx, s.ID, Iteration{}, batch), "ok")
	curve := []Intermediate{{0, 0.1 + 0.2}, {3, -math.SmallestNonzeroFloat64}, {7, 1e300}}
	pruned := Trial{ID: 0, Status: Pruned, Value: 1e300, Attempts: 1, Intermediates: curve}
	tr.must("finish pruned", d.FinishTrial(ctx, s.ID, &pruned), "ok")
	complete := Trial{ID: 1, Status: Complete, Value: 2, Attempts: 1, Intermediates: []Intermediate{{1, 1}, {2, 2}}}
	tr.must("finish complete with a curve", d.FinishTrial(ctx, s.ID, &complete), "ok")
	tr.must("pruned without a curve", d.FinishTrial(ctx, s.ID, &Trial{ID: 2, Status: Pruned, Value: 1}), "error")
	tr.must("steps not increasing", d.FinishTrial(ctx, s.ID, &Trial{ID: 2, Status: Pruned, Value: 1,
		Intermediates: []Intermediate{{2, 1}, {2, 1}}}), "error")
	tr.must("value not finite", d.FinishTrial(ctx, s.ID, &Trial{ID: 2, Status: Complete, Value: 1,
		Intermediates: []Intermediate{{2, math.NaN()}}}), "error")
	tr.must("pruned value not finite", d.FinishTrial(ctx, s.ID, &Trial{ID: 2, Status: Pruned, Value: math.Inf(-1),
		Intermediates: []Intermediate{{2, 1}}}), "error")
	h := Holder{ID: "w1", Host: "h", PID: 1}
	tr.must("register", d.RegisterWorker(ctx, s.ID, h, 1, time.Minute), "ok")
	lt, err := d.LeaseTrial(ctx, s.ID, h, time.Minute)
	tr.must("lease", err, "ok")
	if lt != nil {
		lt.Status, lt.Value, lt.Intermediates = Pruned, 5, []Intermediate{{4, 5}}
		ok, err := d.ReportTrial(ctx, s.ID, h, lt, 3)
		tr.must(fmt.Sprintf("report pruned (accepted %v)", ok), err, "ok")
	}
	a, err := d.Activity(ctx, s.ID)
	tr.add("activity complete=%d pruned=%d pending=%d %v", a.Complete, a.Pruned, a.Pending, err)
	if a.Pruned != 2 || a.Complete != 1 {
		tr.t.Errorf("activity counts %d pruned, %d complete; want 2 and 1", a.Pruned, a.Complete)
	}
	ts := tr.trials(d, s.ID)
	if interBits(ts[0].Intermediates) != interBits(curve) || ts[0].Status != Pruned || ts[0].Value != 1e300 {
		tr.t.Errorf("pruned trial read back: %+v", ts[0])
	}
}

// conformReported: values reported while a trial runs are stored as they
// come with the stop decision (kept once said), refused out of order, not
// finite or for a trial not in flight, and replaced by the outcome's curve.
func conformReported(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "r")
	batch := []Trial{
		{ID: 0, Iteration: 0, Index: 0, X: []float64{0}, U: []float64{0.5}},
		{ID: 1, Iteration: 0, Index: 1, X: []float64{1}, U: []float64{0.5}},
	}
	tr.must("add", d.AddBatch(ctx, s.ID, Iteration{}, batch), "ok")
	tr.must("report 1", d.ReportIntermediate(ctx, s.ID, 0, Intermediate{1, 0.1 + 0.2}, false), "ok")
	tr.must("report 3 stop", d.ReportIntermediate(ctx, s.ID, 0, Intermediate{3, -math.SmallestNonzeroFloat64}, true), "ok")
	tr.must("report 4 go on", d.ReportIntermediate(ctx, s.ID, 0, Intermediate{4, 1e300}, false), "ok")
	tr.must("report step again", d.ReportIntermediate(ctx, s.ID, 0, Intermediate{4, 1}, false), ErrConflict.Error())
	tr.must("report NaN", d.ReportIntermediate(ctx, s.ID, 0, Intermediate{5, math.NaN()}, false), "error")
	tr.must("report negative step", d.ReportIntermediate(ctx, s.ID, 0, Intermediate{-1, 1}, false), "error")
	tr.must("report unknown", d.ReportIntermediate(ctx, s.ID, 9, Intermediate{1, 1}, false), ErrConflict.Error())
	tr.must("report 2 on trial 1", d.ReportIntermediate(ctx, s.ID, 1, Intermediate{2, 2}, false), "ok")
	ts := tr.trials(d, s.ID)
	tr.add("stopping %v %v", ts[0].Stopping, ts[1].Stopping)
	if !ts[0].Stopping || ts[1].Stopping || len(ts[0].Intermediates) != 3 || len(ts[1].Intermediates) != 1 {
		tr.t.Errorf("in flight read back: %+v %+v", ts[0], ts[1])
	}
	tr.must("report 3 stop on trial 1", d.ReportIntermediate(ctx, s.ID, 1, Intermediate{3, 3}, true), "ok")
	tr.must("start trial 1 again", d.StartTrial(ctx, s.ID, 1, 2, time.Now()), "ok")
	tr.must("report 1 on the new attempt", d.ReportIntermediate(ctx, s.ID, 1, Intermediate{1, 1}, false), "ok")
	ts = tr.trials(d, s.ID)
	tr.add("stopping %v %v", ts[0].Stopping, ts[1].Stopping)
	if ts[1].Stopping || interBits(ts[1].Intermediates) != interBits([]Intermediate{{1, 1}}) {
		tr.t.Errorf("restarted trial read back: %+v", ts[1])
	}
	pruned := Trial{ID: 0, Status: Pruned, Value: 7, Attempts: 1, Intermediates: []Intermediate{{2, 7}}}
	tr.must("finish pruned", d.FinishTrial(ctx, s.ID, &pruned), "ok")
	tr.must("finish complete without a curve", d.FinishTrial(ctx, s.ID, &Trial{ID: 1, Status: Complete, Value: 1, Attempts: 1}), "ok")
	tr.must("report finished", d.ReportIntermediate(ctx, s.ID, 1, Intermediate{9, 1}, false), ErrConflict.Error())
	tr.must("start finished", d.StartTrial(ctx, s.ID, 1, 3, time.Now()), ErrConflict.Error())
	ts = tr.trials(d, s.ID)
	tr.add("stopping %v %v", ts[0].Stopping, ts[1].Stopping)
	if ts[0].Stopping || interBits(ts[0].Intermediates) != interBits(pruned.Intermediates) || ts[1].Intermediates != nil {
		tr.t.Errorf("finished read back: %+v %+v", ts[0], ts[1])
	}
	// Outside counts finished trials of negative iterations only: an
	// enqueued one not yet run is not among the finished.
	outside := []Trial{{ID: 2, Iteration: -1, Index: 0, X: []float64{0}, U: []float64{0.5}}, {ID: 3, Iteration: -1, Index: 1, X: []float64{1}, U: []float64{0.5}, Meta: map[string]string{"fidelity_step": "3"}}}
	tr.must("add outside", d.AddBatch(ctx, s.ID, Iteration{Iteration: -1}, outside), "ok")
	tr.must("finish outside", d.FinishTrial(ctx, s.ID, &Trial{ID: 2, Status: Complete, Value: 1, Attempts: 1}), "ok")
	a, err := d.Activity(ctx, s.ID)
	tr.add("outside %d %v", a.Outside, err)
	if a.Outside != 1 {
		tr.t.Errorf("Outside = %d, want the one finished", a.Outside)
	}
	// A proposal's metadata is stored with it, before it finishes.
	if ts := tr.trials(d, s.ID); ts[3].Meta["fidelity_step"] != "3" {
		tr.t.Errorf("pending trial's meta read back as %v", ts[3].Meta)
	}
}

// A version-4 database (before early stopping) holding trials in every
// state is migrated: the trials table is rebuilt with its data, its
// index and constraints, and then takes pruned trials. On SQLite and, when
// it is installed (always under CI), PostgreSQL.
func TestMigrateToPruned(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "v4.db")
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		writeV4(t, raw, dialectSQLite)
		raw.Close()
		d, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		checkMigratedV4(t, d)
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testenv.StartPostgres(t)
		url := pg.NewDatabase(t)
		raw, err := sql.Open("pgx", url)
		if err != nil {
			t.Fatal(err)
		}
		writeV4(t, raw, dialectPostgres)
		raw.Close()
		d, err := Open(url, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		checkMigratedV4(t, d)
	})
}

// writeV4 writes the schema of version 4 and a study with a complete, a
// failed, a running (leased) and a pending trial.
func writeV4(t *testing.T, db *sql.DB, dl dialect) {
	t.Helper()
	for v := range 4 {
		if _, err := db.Exec(dl.ddl(migrations[v])); err != nil {
			t.Fatalf("migration %d: %v", v, err)
		}
	}
	for _, q := range []string{
		`INSERT INTO tesbo_meta VALUES ('schema_version','4')`,
		`INSERT INTO studies(id, name, objective, acquisition, seed, space, settings, created_at, updated_at) VALUES (1,'old','o','a',5,'[]','{}',0,0)`,
		`INSERT INTO trials(study_id,id,iteration,batch_index,x,u,status,value,error,attempts,created_at,finished_at,eval_seconds,meta,worker)
		 VALUES (1,0,0,0,'[1]','[0.5]','complete',2.5,'',1,10,20,0.5,'{"k":"v"}','h:1')`,
		`INSERT INTO trials(study_id,id,iteration,batch_index,x,u,status,error,attempts,created_at) VALUES (1,1,0,1,'[2]','[0.25]','failed','boom',3,11)`,
		`INSERT INTO trials(study_id,id,iteration,batch_index,x,u,status,attempts,created_at,holder,lease_expires) VALUES (1,2,1,0,'[3]','[0.75]','running',1,12,'w',99)`,
		`INSERT INTO trials(study_id,id,iteration,batch_index,x,u,status,created_at) VALUES (1,3,1,1,'[4]','[1]','pending',13)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func checkMigratedV4(t *testing.T, d *DB) {
	t.Helper()
	ctx := context.Background()
	s, err := d.Study(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := d.Trials(ctx, s.ID)
	if err != nil || len(ts) != 4 {
		t.Fatalf("trials after migration: %v %+v", err, ts)
	}
	if ts[0].Status != Complete || ts[0].Value != 2.5 || ts[0].Meta["k"] != "v" || ts[0].Worker != "h:1" ||
		ts[1].Status != Failed || ts[1].Error != "boom" || ts[1].Attempts != 3 || ts[2].Status != Running || ts[3].Status != Pending {
		t.Fatalf("trials after migration: %+v", ts)
	}
	if p, r, f, err := d.QueueCounts(ctx, s.ID); err != nil || p != 1 || r != 1 || f != 2 {
		t.Fatalf("queue counts after migration: %d %d %d %v", p, r, f, err)
	}
	// The (iteration, batch_index) uniqueness survived the rebuild.
	if err := d.AddBatch(ctx, s.ID, Iteration{Iteration: 1}, []Trial{{ID: 9, Iteration: 1, Index: 1, X: []float64{0}, U: []float64{0}}}); err == nil {
		t.Fatal("a second trial in slot (1, 1) was accepted after the migration")
	}
	p := Trial{ID: 3, Status: Pruned, Value: -1, Intermediates: []Intermediate{{1, 0}, {2, -1}}}
	if err := d.FinishTrial(ctx, s.ID, &p); err != nil {
		t.Fatalf("a pruned trial after the migration: %v", err)
	}
	var step int
	if err := d.db.QueryRow(`SELECT step FROM trials WHERE study_id=? AND id=3`, s.ID).Scan(&step); err != nil || step != 2 {
		t.Fatalf("stored step %d %v, want 2", step, err)
	}
	// The CHECK constraint still refuses unknown states.
	if _, err := d.db.Exec(`UPDATE trials SET status='bogus' WHERE study_id=? AND id=0`, s.ID); err == nil {
		t.Fatal("the rebuilt table accepts any status")
	}
}

// conformImported: AddFinished stores trials finished elsewhere with
// their outcomes (values, curves, outputs, metadata) in one transaction;
// one that cannot be stored leaves none of the batch, nor its iteration.
func conformImported(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "w")
	tr.must("add one", d.AddBatch(ctx, s.ID, Iteration{}, []Trial{{ID: 0, X: []float64{0}, U: []float64{0}}}), "ok")
	bad := []Trial{
		{ID: 1, Iteration: -2, Index: 0, X: []float64{0.5}, U: []float64{0.5}, Status: Complete, Value: 2, Attempts: 1},
		{ID: 0, Iteration: -2, Index: 1, X: []float64{0.5}, U: []float64{0.5}, Status: Complete, Value: 3, Attempts: 1},
	}
	tr.must("import over a taken ID", d.AddFinished(ctx, s.ID, Iteration{Iteration: -2}, bad), ErrConflict.Error())
	tr.must("import an unfinished trial", d.AddFinished(ctx, s.ID, Iteration{Iteration: -2}, []Trial{{ID: 1, Iteration: -2, X: []float64{0}, U: []float64{0}}}), "error")
	its, err := d.Iterations(ctx, s.ID)
	tr.add("iterations %d %v", len(its), err)
	if ts := tr.trials(d, s.ID); len(ts) != 1 || len(its) != 1 {
		tr.t.Errorf("after refused imports: %d trials, %d iterations; want the one added and its iteration", len(ts), len(its))
	}
	ok := []Trial{
		{ID: 1, Iteration: -2, Index: 0, X: []float64{0.25}, U: []float64{0.25}, Status: Complete, Value: 0.1 + 0.2, Attempts: 1,
			Intermediates: []Intermediate{{1, 0.5}, {3, 0.1 + 0.2}}, Meta: map[string]string{"imported_from": "old"}},
		{ID: 2, Iteration: -2, Index: 1, X: []float64{0.75}, U: []float64{0.75}, Status: Pruned, Value: -math.SmallestNonzeroFloat64, Attempts: 1,
			Intermediates: []Intermediate{{1, -math.SmallestNonzeroFloat64}}},
	}
	tr.must("import", d.AddFinished(ctx, s.ID, Iteration{Iteration: -2}, ok), "ok")
	tr.must("finish an imported trial", d.FinishTrial(ctx, s.ID, &Trial{ID: 1, Status: Complete, Value: 1, Attempts: 1}), ErrConflict.Error())
	ts := tr.trials(d, s.ID)
	if len(ts) != 3 || ts[1].Status != Complete || interBits(ts[1].Intermediates) != interBits(ok[0].Intermediates) ||
		ts[1].Meta["imported_from"] != "old" || ts[2].Status != Pruned || ts[1].FinishedAt.IsZero() || ts[1].CreatedAt.IsZero() {
		tr.t.Errorf("imported trials read back: %+v", ts)
	}
}

// conformLeasedReports: a worker's intermediate values are stored as it
// reports them while it holds the trial's lease (ReportLeased), refused
// from another worker or once the trial left it, dropped when the trial
// is leased again, and replaced by the outcome's curve.
func conformLeasedReports(tr *transcript, d Storage) {
	ctx := context.Background()
	s := conformStudy(tr, d, "q")
	tr.must("add", d.AddBatch(ctx, s.ID, Iteration{}, []Trial{{ID: 0, X: []float64{0}, U: []float64{0}}}), "ok")
	w1, w2 := NewHolder(), NewHolder()
	tr.must("report before a lease", d.ReportLeased(ctx, s.ID, w1, 0, Intermediate{1, 1}), ErrConflict.Error())
	lease := func(h Holder) Trial {
		t, err := d.LeaseTrial(ctx, s.ID, h, time.Minute)
		if err != nil || t == nil {
			tr.t.Fatalf("lease: %v %v", t, err)
		}
		return *t
	}
	t := lease(w1)
	tr.must("report 1", d.ReportLeased(ctx, s.ID, w1, 0, Intermediate{1, 0.1 + 0.2}), "ok")
	tr.must("report 2", d.ReportLeased(ctx, s.ID, w1, 0, Intermediate{2, -math.SmallestNonzeroFloat64}), "ok")
	tr.must("report 2 again", d.ReportLeased(ctx, s.ID, w1, 0, Intermediate{2, 1}), ErrConflict.Error())
	tr.must("report from another worker", d.ReportLeased(ctx, s.ID, w2, 0, Intermediate{3, 1}), ErrConflict.Error())
	tr.must("report NaN", d.ReportLeased(ctx, s.ID, w1, 0, Intermediate{3, math.NaN()}), "error")
	if ts := tr.trials(d, s.ID); interBits(ts[0].Intermediates) != interBits([]Intermediate{{1, 0.1 + 0.2}, {2, -math.SmallestNonzeroFloat64}}) {
		tr.t.Errorf("running trial's curve read back: %+v", ts[0].Intermediates)
	}
	t.Status, t.Error = Failed, "boom"
	ok, err := d.ReportTrial(ctx, s.ID, w1, &t, 3) // back to the queue
	tr.add("fail with attempts left: accepted=%v %s", ok, errClass(err))
	tr.must("report after it left the worker", d.ReportLeased(ctx, s.ID, w1, 0, Intermediate{3, 1}), ErrConflict.Error())
	t = lease(w2)
	if ts := tr.trials(d, s.ID); ts[0].Intermediates != nil {
		tr.t.Errorf("a new lease kept the earlier attempt's curve: %+v", ts[0].Intermediates)
	}
	tr.must("new attempt's report 1", d.ReportLeased(ctx, s.ID, w2, 0, Intermediate{1, 5}), "ok")
	t.Status, t.Value, t.Intermediates = Complete, 6, []Intermediate{{1, 5}, {2, 6}}
	ok, err = d.ReportTrial(ctx, s.ID, w2, &t, 3)
	tr.add("complete: accepted=%v %s", ok, errClass(err))
	if ts := tr.trials(d, s.ID); interBits(ts[0].Intermediates) != interBits(t.Intermediates) {
		tr.t.Errorf("finished trial's curve read back: %+v", ts[0].Intermediates)
	}
	tr.must("report after the outcome", d.ReportLeased(ctx, s.ID, w2, 0, Intermediate{3, 1}), ErrConflict.Error())
}
