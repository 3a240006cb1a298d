package main

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tesbo/tesbo/internal/testenv"
)

// failScript is an objective whose every evaluation fails.
const failScript = `package fail

import (
	"context"
	"errors"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "fail", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	return 0, errors.New("boom")
}
`

// A study none of whose evaluations completed did not succeed: exit 1 with
// one line that says so and where the errors are (the summary is still
// printed), on the first run and on a resume of the finished study (which
// says first that it is complete).
func TestEveryEvaluationFails(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "fail.go"), failScript)
	for _, args := range [][]string{
		{"run", "--objective", "fail", "--acq", "random", "--init", "2", "--iters", "2", "--batch", "2", "--db", "f.db", "--study", "f", "--plugins", plugins, "--log-level", "error"},
		{"resume", "--db", "f.db", "--study", "f", "--plugins", plugins, "--log-level", "error"},
	} {
		r := cli(t, dir, args...)
		lines := errorLines(r.stderr)
		if r.code != 1 || len(lines) == 0 || !strings.Contains(lines[len(lines)-1], "every evaluation failed (6 of 6)") ||
			!strings.Contains(lines[len(lines)-1], "tesbo-host trials --db f.db --study f") {
			t.Fatalf("%s: exit %d, stderr %q", args[0], r.code, lines)
		}
		if !strings.Contains(r.stdout, "0 complete, 6 failed") {
			t.Fatalf("%s: no summary: %q", args[0], r.stdout)
		}
	}
}

// corruptTable overwrites the root page of a table of a closed SQLite
// database with garbage: the file still opens, and reading the table fails
// as corrupt.
func corruptTable(t *testing.T, path, table string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var root, size int64
	err = db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE name = ?`, table).Scan(&root)
	if err == nil {
		err = db.QueryRow(`PRAGMA page_size`).Scan(&size)
	}
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\x5a", int(size))), (root-1)*size); err != nil {
		t.Fatal(err)
	}
}

// Bad study names, a database corrupt past its schema and a plugin memory
// limit no plugin can start in are bad input on every command: one line,
// exit 2, nothing written.
func TestBadNamesAndDatabases(t *testing.T) {
	dir := t.TempDir()
	if r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--db", "good.db", "--study", "taken"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--db", "late.db", "--study", "taken"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	corruptTable(t, filepath.Join(dir, "late.db"), "studies")

	long := strings.Repeat("n", 201)
	names := []struct {
		name, study string
		want        []string
	}{
		{"long name", long, []string{"201 bytes exceeds the limit of 200"}},
		{"invalid UTF-8", "bad\xffname", []string{"not valid UTF-8"}},
		{"line break", "a\nb", []string{"unprintable character U+000A"}},
		{"escape", "a\x1b[31mb", []string{"unprintable character U+001B"}},
		{"white space only", " ", []string{"begins or ends with white space"}},
		{"trailing space", "a ", []string{"begins or ends with white space"}},
	}
	type tc struct {
		name string
		args []string
		want []string
	}
	var cases []tc
	for _, n := range names {
		cases = append(cases,
			tc{"run " + n.name, []string{"run", "--objective", "grid", "--acq", "random", "--db", "new.db", "--study", n.study}, append([]string{"bad --study"}, n.want...)},
			tc{"resume " + n.name, []string{"resume", "--db", "good.db", "--study", n.study}, n.want},
			tc{"worker " + n.name, []string{"worker", "--db", "good.db", "--study", n.study}, n.want},
			tc{"trials " + n.name, []string{"trials", "--db", "good.db", "--study", n.study}, n.want})
	}
	cases = append(cases,
		tc{"trials corrupt studies table", []string{"trials", "--db", "late.db", "--study", "taken"}, []string{"corrupt"}},
		tc{"resume corrupt studies table", []string{"resume", "--db", "late.db", "--study", "taken"}, []string{"corrupt"}},
		tc{"worker corrupt studies table", []string{"worker", "--db", "late.db", "--study", "taken"}, []string{"corrupt"}},
		tc{"plugin memory 1B", []string{"run", "--objective", "grid", "--db", "new.db", "--plugin-memory", "1B"}, []string{"--plugin-memory \"1B\"", "at least 32MiB"}},
		tc{"plugin memory 31MiB", []string{"resume", "--db", "good.db", "--study", "taken", "--plugin-memory", "31MiB"}, []string{"at least 32MiB"}},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir)
			checkUsageError(t, cli(t, dir, c.args...), c.want)
			sameSnapshot(t, before, snapshot(t, dir))
		})
	}
	// A name at the limit is accepted, and the default name of a long
	// objective name is cut to fit.
	if r := cli(t, dir, "run", "--objective", "grid", "--acq", "random", "--iters", "1", "--db", "good.db", "--study", long[:200], "--json"); r.code != 0 {
		t.Fatalf("200-byte name: %d %s", r.code, r.stderr)
	}
}

// A worker started while PostgreSQL is down waits for it, logging each
// retry, as the workers already running do, and joins once it is back.
func TestWorkerWaitsForPostgres(t *testing.T) {
	pg := testenv.StartPostgres(t)
	url := pg.NewDatabase(t)
	dir, plugins := workerSetup(t)
	if r := cli(t, dir, "run", "--db", url, "--study", "w", "--objective", "nap", "--acq", "random", "--init", "2", "--iters", "1", "--batch", "1",
		"--plugins", plugins, "--log-level", "error"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	pg.Stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, "worker", "--db", url, "--study", "w", "--plugins", plugins, "--log-level", "warn")
	cmd.Dir = dir
	var se testenv.SyncBuffer
	cmd.Stderr = &se
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("the worker exited while PostgreSQL was down (%v): %s", err, se.String())
	case <-time.After(3 * time.Second):
	}
	if n := strings.Count(se.String(), "retrying the connection"); n < 2 {
		t.Fatalf("%d retries logged in 3 s: %s", n, se.String())
	}
	// Ctrl-C ends the wait as an interruption (130), not as bad input.
	r := func() result {
		stop := exec.Command(binPath, "worker", "--db", url, "--study", "w", "--plugins", plugins, "--log-level", "error")
		stop.Dir = dir
		var se testenv.SyncBuffer
		stop.Stderr = &se
		if err := stop.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		stop.Process.Signal(syscall.SIGINT)
		stop.Wait()
		return result{stderr: se.String(), code: stop.ProcessState.ExitCode()}
	}()
	if lines := errorLines(r.stderr); r.code != 130 || len(lines) != 1 || !strings.Contains(lines[0], "interrupted") {
		t.Fatalf("SIGINT while waiting: exit %d, %q", r.code, lines)
	}
	pg.Start(t)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker after PostgreSQL came back: %v: %s", err, se.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the worker did not finish within a minute of PostgreSQL's return")
	}
}
