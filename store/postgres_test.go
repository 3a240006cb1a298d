package store

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// pgCluster, set while TestPostgres runs, makes newDB open PostgreSQL
// databases.
var pgCluster *testenv.Postgres

// TestPostgres runs the backend-independent tests of the package against
// PostgreSQL (a throwaway cluster; under CI it must be installed).
func TestPostgres(t *testing.T) {
	pgCluster = testenv.StartPostgres(t)
	defer func() { pgCluster = nil }()
	for _, tc := range []struct {
		name string
		f    func(*testing.T)
	}{
		{"StudyRoundTrip", TestStudyRoundTrip},
		{"TrialsBitwise", TestTrialsBitwise},
		{"TrialTransitions", TestTrialTransitions},
		{"ConcurrentStudies", TestConcurrentStudies},
		{"LeaseExclusive", TestLeaseExclusive},
		{"LeaseTakeoverExpired", TestLeaseTakeoverExpired},
		{"LeaseTakeoverDeadProcess", TestLeaseTakeoverDeadProcess},
		{"Queue", TestQueue},
		{"ReadOnly", TestReadOnly},
		{"WorkerRegistered", TestWorkerRegistered},
		{"ErrorTextStored", TestErrorTextStored},
		{"InactiveCoordinatesRoundTrip", TestInactiveCoordinatesRoundTrip},
		{"PostgresSpecific", testPostgresSpecific},
		{"ReclaimDuringOutage", testReclaimDuringOutage}, // last: it stops the server
	} {
		t.Run(tc.name, tc.f)
	}
}

// testPostgresSpecific: a URL with a password never shows it, an empty
// database is not a study file until written, and the schema uses 64-bit
// integers and doubles.
func testPostgresSpecific(t *testing.T) {
	ctx := context.Background()
	url := pgCluster.NewDatabase(t)
	d, err := Open(url, Options{DeferMigration: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !d.MigrationPending() {
		t.Fatal("an empty database has the current schema")
	}
	if _, err := d.Study(ctx, "a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("study in an empty database: %v", err)
	}
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s := newStudy(t, d, "a")
	if s.Seed != math.MaxUint64-7 {
		t.Fatal(s.Seed)
	}
	var typ string
	if err := d.db.QueryRow(`SELECT data_type FROM information_schema.columns WHERE table_name='trials' AND column_name='value'`).Scan(&typ); err != nil || typ != "double precision" {
		t.Fatalf("value column type %q (%v)", typ, err)
	}
	withPass := strings.Replace(url, "postgres@", "postgres:s3cret@", 1)
	d2, err := Open(withPass, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	if strings.Contains(d2.Path(), "s3cret") {
		t.Fatalf("Path shows the password: %s", d2.Path())
	}
	if _, err := Open(strings.Replace(url, "/t", "/nosuchdb", 1), Options{}); err == nil {
		t.Fatal("opened a database that does not exist")
	}
}

// testReclaimDuringOutage: while the server is down, ReclaimTrials fails
// at once instead of retrying until it is back (it would then take every
// lease the outage expired, live workers' too), and the handle records
// that it found the server down (LastUnavailable); the other writes still
// wait for the server.
func testReclaimDuringOutage(t *testing.T) {
	ctx := context.Background()
	d, err := Open(pgCluster.NewDatabase(t), Options{BusyRetry: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s := newStudy(t, d, "a")
	newPending(t, d, s, 0)
	if tr, err := d.LeaseTrial(ctx, s.ID, NewHolder(), time.Nanosecond); err != nil || tr == nil {
		t.Fatalf("lease: %v, %v", tr, err)
	}
	if !d.LastUnavailable().IsZero() {
		t.Fatalf("LastUnavailable %v before any outage", d.LastUnavailable())
	}
	pgCluster.Stop(t)
	restarted := false
	defer func() {
		if !restarted {
			pgCluster.Start(t)
		}
	}()
	start := time.Now()
	n, err := d.ReclaimTrials(ctx, s.ID, 3)
	if !errors.Is(err, ErrUnavailable) || n != 0 {
		t.Fatalf("reclaim with the server down: %d, %v; want ErrUnavailable", n, err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("reclaim waited %v for the server", took)
	}
	if !d.LastUnavailable().After(start) {
		t.Fatalf("LastUnavailable %v, want after %v", d.LastUnavailable(), start)
	}
	pgCluster.Start(t)
	restarted = true
	if n, err := d.ReclaimTrials(ctx, s.ID, 3); err != nil || n != 1 {
		t.Fatalf("reclaim with the server back: %d, %v; want 1", n, err)
	}
}
