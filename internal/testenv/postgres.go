package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a throwaway PostgreSQL cluster: initdb and pg_ctl on a Unix
// socket in a temporary directory, with trust authentication and no TCP
// port. As root the server runs as the postgres user (PostgreSQL refuses
// to run as root).
type Postgres struct {
	bin, dir, data string
	runAs          string // "" or the user the server runs as
	n              atomic.Int64
}

// pgBin finds the directory of initdb and pg_ctl: on the PATH, else
// Debian's /usr/lib/postgresql/VERSION/bin (newest first).
func pgBin() string {
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		if _, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "pg_ctl")); err == nil {
			return dirs[i]
		}
	}
	return ""
}

// StartPostgres starts a cluster for the test t and stops it when t ends.
// Without PostgreSQL's server programs it calls Need (install the Debian
// package postgresql; scripts/deps.sh does).
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := pgBin()
	if bin == "" {
		Need(t, "PostgreSQL server programs (initdb, pg_ctl) not found: install them (apt-get install postgresql)")
	}
	dir, err := os.MkdirTemp("", "tesbo-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := &Postgres{bin: bin, dir: dir, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		p.runAs = "postgres"
		u, err := user.Lookup(p.runAs)
		if err != nil {
			Need(t, "running as root and there is no postgres user to run PostgreSQL as: install the postgresql package")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := p.run("initdb", "-D", p.data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	conf := fmt.Sprintf("listen_addresses = ''\nunix_socket_directories = '%s'\nfsync = off\nmax_connections = 200\nshared_buffers = 32MB\n", dir)
	f, err := os.OpenFile(filepath.Join(p.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(conf)
	f.Close()
	p.Start(t)
	t.Cleanup(func() { p.run("pg_ctl", "-D", p.data, "-m", "immediate", "-w", "stop") })
	return p
}

// run runs one of PostgreSQL's programs (as the server's user when root).
func (p *Postgres) run(prog string, args ...string) ([]byte, error) {
	path := filepath.Join(p.bin, prog)
	var cmd *exec.Cmd
	if p.runAs != "" {
		cmd = exec.Command("runuser", append([]string{"-u", p.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.Command(path, args...)
	}
	cmd.Dir = p.dir
	return cmd.CombinedOutput()
}

// Start starts the server (again, after Stop) and waits until it accepts
// connections.
func (p *Postgres) Start(t testing.TB) {
	t.Helper()
	if out, err := p.run("pg_ctl", "-D", p.data, "-l", filepath.Join(p.dir, "log"), "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

// Stop stops the server the way an administrator's restart does
// (pg_ctl stop -m fast: sessions are ended, the data is kept).
func (p *Postgres) Stop(t testing.TB) {
	t.Helper()
	if out, err := p.run("pg_ctl", "-D", p.data, "-m", "fast", "-w", "stop"); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// URL returns the connection URL of database db.
func (p *Postgres) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@/%s?host=%s&sslmode=disable", db, p.dir)
}

// NewDatabase creates a fresh, empty database and returns its URL.
func (p *Postgres) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), p.n.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		t.Fatalf("connect to the test cluster: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return p.URL(strings.ToLower(name))
}
