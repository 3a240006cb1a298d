package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// TestPostgresPasswordFromEnvironment: a --db URL without password takes
// it from PGPASSWORD, from the file PGPASSFILE names, or from ~/.pgpass,
// as psql does (pgx reads them); without any, the error says where to put
// it.
func TestPostgresPasswordFromEnvironment(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.PasswordUser(t, "alice", "hunter2")
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"PGPASSWORD", "PGPASSFILE"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	open := func() error {
		d, err := Open(url, Options{})
		if err == nil {
			d.Close()
		}
		return err
	}
	err := open()
	if err == nil || !strings.Contains(err.Error(), "PGPASSWORD") || !strings.Contains(err.Error(), "~/.pgpass") {
		t.Fatalf("no password anywhere: %v", err)
	}

	t.Setenv("PGPASSWORD", "hunter2")
	if err := open(); err != nil {
		t.Fatalf("PGPASSWORD: %v", err)
	}
	t.Setenv("PGPASSWORD", "wrong")
	if err := open(); err == nil || !strings.Contains(err.Error(), "check the password") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong PGPASSWORD: %v", err)
	}
	os.Unsetenv("PGPASSWORD")

	file := filepath.Join(t.TempDir(), "pass")
	if err := os.WriteFile(file, []byte("*:*:*:alice:hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PGPASSFILE", file)
	if err := open(); err != nil {
		t.Fatalf("PGPASSFILE: %v", err)
	}
	os.Unsetenv("PGPASSFILE")

	if err := os.WriteFile(filepath.Join(home, ".pgpass"), []byte("localhost:*:*:alice:hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := open(); err != nil {
		t.Fatalf("~/.pgpass: %v", err)
	}
}
