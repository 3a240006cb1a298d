package testenv

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PasswordUser adds a superuser name that must log in with password
// (scram-sha-256; the cluster's other users stay trusted) and returns the
// URL, without the password, of a fresh database for it.
func (p *Postgres) PasswordUser(t testing.TB, name, password string) string {
	t.Helper()
	db := p.NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		t.Fatalf("connect to the test cluster: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, fmt.Sprintf("CREATE ROLE %s LOGIN SUPERUSER PASSWORD '%s'", name, password)); err != nil {
		t.Fatalf("create role: %v", err)
	}
	hba := filepath.Join(p.data, "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	// The first matching line wins: put this user's before the trust lines.
	line := fmt.Sprintf("local all %s scram-sha-256\n", name)
	if err := os.WriteFile(hba, append([]byte(line), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := p.run("pg_ctl", "-D", p.data, "reload"); err != nil {
		t.Fatalf("pg_ctl reload: %v\n%s", err, out)
	}
	url := strings.Replace(db, "postgres://postgres@", "postgres://"+name+"@", 1)
	// The reload is asynchronous: wait until a password-less login fails.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Password = ""
		c, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			return url
		}
		c.Close(ctx)
		if time.Now().After(deadline) {
			t.Fatal("pg_hba.conf reload did not take effect")
		}
	}
}
