package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/store"
)

// Every bad input: exit 2, one error line, nothing on stdout, nothing
// written.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	older, good := badInputDatabases(t, dir)
	for _, c := range badInputCases() {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir)
			r := cli(t, dir, c.args...)
			checkUsageError(t, r, c.want)
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
	// The older database was left at schema 1 by every refusal above; a
	// study that is accepted migrates it, keeping its data.
	t.Run("older db migrated when accepted", func(t *testing.T) { testOlderDBMigrated(t, dir, older) })
	// A database locked by another process.
	t.Run("db locked", func(t *testing.T) { testDBLocked(t, dir, good) })
}

// badInputCase is a command TestBadInput expects refused, with the phrases
// its error line must hold.
type badInputCase struct {
	name string
	args []string
	want []string
}

// badInputDatabases writes the databases TestBadInput's commands name into
// dir: text.db (not a database), newer.db (a newer schema), corrupt.db,
// good.db (holding study "taken"), older.db (schema 1, holding "taken") and
// dbdir (a directory). It returns the paths of older.db and good.db.
func badInputDatabases(t *testing.T, dir string) (older, good string) {
	t.Helper()
	// Databases to refuse.
	os.WriteFile(filepath.Join(dir, "text.db"), []byte("not a database\n"), 0o644)
	newer := filepath.Join(dir, "newer.db")
	corrupt := filepath.Join(dir, "corrupt.db")
	good = filepath.Join(dir, "good.db")
	for _, p := range []string{newer, corrupt, good} {
		d, err := store.Open(p, store.Options{Create: true})
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
	}
	if r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--db", "good.db", "--study", "taken"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	rawExec(t, newer, `UPDATE tesbo_meta SET value='99' WHERE key='schema_version'`)
	// A database of the older schema 1 (no iterations table) holding study
	// "taken": refusing a command must not migrate it.
	older = filepath.Join(dir, "older.db")
	if d, err := store.Open(older, store.Options{Create: true}); err != nil {
		t.Fatal(err)
	} else {
		d.Close()
	}
	rawExec(t, older, `DROP TABLE intermediates; ALTER TABLE trials DROP COLUMN step; DROP TABLE workers; DROP TABLE trial_attempts; DROP INDEX trials_queue; ALTER TABLE trials DROP COLUMN worker; ALTER TABLE trials DROP COLUMN holder; ALTER TABLE trials DROP COLUMN lease_expires; ALTER TABLE trials DROP COLUMN outputs; DROP TABLE iterations; UPDATE tesbo_meta SET value='1' WHERE key='schema_version';
		INSERT INTO studies(name, objective, acquisition, seed, space, settings, created_at, updated_at)
		VALUES ('taken', 'grid', 'random', 1, '[]', '{}', 0, 0)`)
	// A directory where the database should be: unreadable as a database
	// whoever runs the test (root included).
	if err := os.Mkdir(filepath.Join(dir, "dbdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(corrupt)
	for i := 4096; i < len(b); i++ {
		b[i] = 0x5A
	}
	os.WriteFile(corrupt, b, 0o644)
	return older, good
}

// badInputCases are the refusals of TestBadInput, run against the
// databases of badInputDatabases.
func badInputCases() []badInputCase {
	branin := []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "new.db"}
	return []badInputCase{
		{"unknown objective", []string{"run", "--objective", "nope", "--db", "new.db"}, []string{"unknown objective \"nope\"", "synthetic/branin", "grid"}},
		{"unknown acquisition", []string{"run", "--objective", "synthetic/branin", "--acq", "nope", "--db", "new.db"}, []string{"unknown acquisition \"nope\"", "tes-ep", "ei", "random"}},
		{"missing objective", []string{"run", "--db", "new.db"}, []string{"objective"}},
		{"batch 0", append(branin, "--batch", "0"), []string{"--batch"}},
		{"batch not a number", append(branin, "--batch", "two"), []string{"batch"}},
		{"batch auto with ei", append(branin, "--batch", "auto"), []string{"acquisition \"ei\" cannot size its batches", "tes"}},
		{"batch-max 0", []string{"run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-max", "0", "--db", "new.db"}, []string{"--batch-max 0"}},
		{"batch-max too large", []string{"run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-max", "101", "--db", "new.db"}, []string{"batch 101 exceeds 100"}},
		{"negative batch gain", []string{"run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-min-gain", "-1", "--db", "new.db"}, []string{"--batch-min-gain"}},
		{"negative iters", append(branin, "--iters", "-1"), []string{"--iters"}},
		{"zero iters", append(branin, "--iters", "0"), []string{"--iters 0", "≥ 1"}},
		{"negative init", append(branin, "--init", "-3"), []string{"--init"}},
		{"negative trusted", append(branin, "--trusted", "-1"), []string{"--trusted"}},
		{"negative parallel", append(branin, "--parallel", "-2"), []string{"--parallel"}},
		{"negative noise", append(branin, "--noise-var", "-1"), []string{"--noise-var"}},
		{"NaN noise", append(branin, "--noise-var", "NaN"), []string{"--noise-var"}},
		{"negative seed", append(branin, "--seed", "-1"), []string{"seed"}},
		{"param without =", append(branin, "--param", "foo"), []string{"--param", "key=value"}},
		{"reserved param", append(branin, "--param", "seed=3"), []string{"reserved"}},
		{"duplicate param", append(branin, "--param", "a=1", "--param", "a=2"), []string{"twice"}},
		{"param for a script", []string{"run", "--objective", "grid", "--acq", "ei", "--db", "new.db", "--param", "a=1"}, []string{"takes no parameters"}},
		{"negative timeout", append(branin, "--eval-timeout", "-1s"), []string{"--eval-timeout"}},
		{"bad timeout", append(branin, "--eval-timeout", "soon"), []string{"eval-timeout"}},
		{"negative retries", append(branin, "--retries", "-1"), []string{"--retries"}},
		{"bad log level", append(branin, "--log-level", "loud"), []string{"--log-level"}},
		{"unknown flag", append(branin, "--bogus"), []string{"unknown flag"}},
		{"extra argument", append(branin, "extra"), []string{"unknown command"}},
		{"bad checksum flag", append(branin, "--plugin-sha256", "synthetic"), []string{"NAME=HEX"}},
		{"checksum mismatch", append(branin, "--plugin-sha256", "synthetic="+strings.Repeat("0", 64)), []string{"checksum"}},
		{"checksum mismatch by objective name", append(branin, "--plugin-sha256", "synthetic/branin="+strings.Repeat("0", 64)), []string{"--plugin-sha256", "refusing", "synthetic/branin"}},
		{"checksum for an unknown plugin", append(branin, "--plugin-sha256", "nope="+strings.Repeat("0", 64)), []string{"--plugin-sha256", "no plugin", "\"nope\""}},
		{"checksum not hex", append(branin, "--plugin-sha256", "synthetic=xyz"), []string{"64 hex digits"}},
		{"missing plugins dir", append(branin, "--plugins", "/nonexistent/plugins"), []string{"plugins directory"}},
		{"batch larger than integer space", []string{"run", "--objective", "grid", "--acq", "random", "--batch", "10", "--db", "new.db"}, []string{"larger than the 9 distinct points"}},
		{"init larger than integer space", []string{"run", "--objective", "grid", "--acq", "random", "--init", "10", "--db", "new.db"}, []string{"larger than the 9 distinct points"}},
		{"db not sqlite", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "text.db"}, []string{"not a tesbo study database"}},
		{"db newer schema", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "newer.db"}, []string{"newer tesbo"}},
		{"db corrupt", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "corrupt.db"}, []string{"corrupt"}},
		{"db in missing directory", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "no/such/dir.db"}, []string{"does not exist"}},
		{"db is a directory", []string{"run", "--objective", "synthetic/branin", "--acq", "ei", "--db", "dbdir"}, []string{"is a directory"}},
		{"resume db is a directory", []string{"resume", "--db", "dbdir", "--study", "x"}, []string{"is a directory"}},
		{"bad recommend", append(branin, "--recommend", "best"), []string{"--recommend", "auto, evaluated or refine"}},
		{"bad model", append(branin, "--model", "sparse"), []string{"--model \"sparse\"", "auto, exact or local"}},
		{"huge local model", append(branin, "--local-points", "100000"), []string{"--local-points 100000", "[0, 4000]"}},
		// Sizes whose memory or time cannot be met (host's Max* limits).
		{"huge batch", []string{"run", "--objective", "synthetic/branin", "--acq", "random", "--db", "new.db", "--batch", "1000000000"}, []string{"batch 1000000000 exceeds 1000", "jointly"}},
		{"huge tes batch", []string{"run", "--objective", "synthetic/branin", "--acq", "tes-ep", "--db", "new.db", "--batch", "1000"}, []string{"batch 1000 exceeds 100, the limit for tes-ep"}},
		{"huge ei batch", append(branin, "--batch", "100000"), []string{"batch 100000 exceeds 1000"}},
		{"huge init", append(branin, "--init", "1000000000"), []string{"initial design of 1000000000 points exceeds the limit of 5000"}},
		{"huge trusted", append(branin, "--trusted", "1000000000"), []string{"1000000000 trusted maximizers exceed the limit of 100", "orthant"}},
		{"huge iters", append(branin, "--iters", "1000000000"), []string{"exceeds the limit of 5000 trials", "GP"}},
		{"huge budget", append(branin, "--iters", "100", "--batch", "100"), []string{"exceeds the limit of 5000 trials"}},
		{"huge parallel", append(branin, "--parallel", "1000000000"), []string{"1000000000 concurrent evaluations exceed the limit of 1000"}},
		{"huge retries", append(branin, "--retries", "1000000000"), []string{"1000000000 retries exceed the limit of 20"}},
		{"too many parameters", []string{"run", "--objective", "wide", "--acq", "tes-ep", "--db", "new.db"}, []string{"10000 parameters, more than the limit of 1000"}},
		{"resume with huge iters", []string{"resume", "--db", "good.db", "--study", "taken", "--iters", "1000000000"}, []string{"exceeds the limit of 5000 trials"}},
		{"study exists in an older db", []string{"run", "--objective", "grid", "--acq", "random", "--db", "older.db", "--study", "taken"}, []string{"already exists"}},
		{"resume missing study in an older db", []string{"resume", "--db", "older.db", "--study", "x"}, []string{"\"x\" not found", "taken"}},
		{"resume older db without plugins", []string{"resume", "--db", "older.db", "--study", "taken", "--plugins", "/nonexistent/plugins"}, []string{"plugins directory"}},
		{"study exists", []string{"run", "--objective", "grid", "--acq", "random", "--db", "good.db", "--study", "taken"}, []string{"already exists", "tesbo-host resume --db good.db --study taken"}},
		{"resume missing db", []string{"resume", "--db", "missing.db", "--study", "x"}, []string{"no such file"}},
		{"resume missing study", []string{"resume", "--db", "good.db", "--study", "x"}, []string{"\"x\" not found", "taken"}},
		{"resume corrupt db", []string{"resume", "--db", "corrupt.db", "--study", "x"}, []string{"corrupt"}},
		{"resume without study", []string{"resume", "--db", "good.db"}, []string{"study"}},
		{"unknown command", []string{"frobnicate"}, []string{"unknown command"}},
	}
}

// testOlderDBMigrated: the schema-1 database older that every refusal left
// alone is migrated, keeping its data, once a study is accepted.
func testOlderDBMigrated(t *testing.T, dir, older string) {
	if v := schemaVersion(t, older); v != "1" {
		t.Fatalf("schema version %s after the refusals, want 1", v)
	}
	r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--db", "older.db", "--study", "new", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if v := schemaVersion(t, older); v != fmt.Sprint(store.SchemaVersion) {
		t.Fatalf("schema version %s after a run, want %d", v, store.SchemaVersion)
	}
	d, err := store.Open(older, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if names, err := d.StudyNames(context.Background()); err != nil || strings.Join(names, ",") != "taken,new" {
		t.Fatalf("studies after migration: %v %v", names, err)
	}
}

// testDBLocked: a database locked by another process is refused and left
// as it was. The snapshots are taken with no lock held: reading the file
// from this process would drop the holder's POSIX locks (they belong to
// the process, and closing any descriptor of the file releases them).
func testDBLocked(t *testing.T, dir, good string) {
	before := snapshot(t, dir)
	r := func() result {
		holder, err := sql.Open("sqlite", good)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Close()
		conn, err := holder.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(context.Background(), "BEGIN EXCLUSIVE"); err != nil {
			t.Fatal(err)
		}
		defer conn.ExecContext(context.Background(), "ROLLBACK")
		return cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--db", "good.db", "--study", "new")
	}()
	lines := errorLines(r.stderr)
	if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], "locked") {
		t.Fatalf("exit %d, stderr %q", r.code, lines)
	}
	if r.stdout != "" {
		t.Fatalf("stdout: %q", r.stdout)
	}
	sameSnapshot(t, before, snapshot(t, dir))
	if studyExists(good, "new") {
		t.Fatal("the refused study was stored")
	}
}

// schemaVersion reads a database's schema version without opening it
// through store (which could migrate it).
func schemaVersion(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRow(`SELECT value FROM tesbo_meta WHERE key='schema_version'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func rawExec(t *testing.T, path, q string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}

// A stored trial whose point cannot be the study's (another length, a
// unit-cube coordinate outside [0, 1], no value for an always active
// parameter) or with no value (a hand-edited or damaged row) is
// refused by resume, trials' neighbours and serve's model alike as a
// corrupt database, one line and exit 2, instead of a panic in the GP or
// a silent fit.
func TestCorruptTrialRow(t *testing.T) {
	dir := t.TempDir()
	if r := cli(t, dir, "run", "--objective", "synthetic/branin", "--iters", "3", "--db", "good.db", "--study", "s", "--log-level", "error"); r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	for _, c := range []struct{ name, set, want string }{
		{"short", `u='[0.5]'`, "trial 3 has 2 native and 1 unit-cube coordinates, the study's space 2"},
		{"long", `u='[0.5,0.5,7]'`, "trial 3 has 2 native and 3 unit-cube coordinates"},
		{"outside", `u='[0.5,7]'`, "trial 3's unit-cube coordinate 1 is 7, outside [0, 1]"},
		{"no value", `x='[null,0.2]', u='[null,0.2]'`, "trial 3 has no value for x1, which is always active"},
		{"null value", `value=NULL`, "trial 3: database file is corrupt: complete trial with value NULL"},
	} {
		db := filepath.Join(dir, c.name+".db")
		copyFile(t, filepath.Join(dir, "good.db"), db)
		rawExec(t, db, "UPDATE trials SET "+c.set+" WHERE id=3")
		r := cli(t, dir, "resume", "--db", db, "--study", "s", "--iters", "5")
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "panic") {
			t.Errorf("%s: resume exit %d, stderr %q; want exit 2 and one line saying %q", c.name, r.code, r.stderr, c.want)
		}
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
