package store

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

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
