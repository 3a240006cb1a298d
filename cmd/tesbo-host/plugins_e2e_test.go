package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host/loader"
)

// End to end through 'tesbo-host run' for every plugin kind the CLI
// optimizes besides the prebuilt executable and the objective script of
// run_test.go: a Go source directory built on demand, an acquisition
// script, a suggester and the Python gRPC objective. Each test gets its own
// plugins directory (--plugins overrides the TESBO_PLUGINS that cli sets).

// writeFile writes a test file, failing the test on error.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// linkInto symlinks the repository path src into dir as name.
func linkInto(t *testing.T, dir, name, src string) {
	t.Helper()
	abs, err := filepath.Abs(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil {
		t.Fatal(err)
	}
}

// cliEnv is cli with extra environment variables (later ones win).
func cliEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "TESBO_PLUGINS="+pluginsDir), env...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	r := result{stdout: so.String(), stderr: se.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", args, err)
	}
	return r
}

// An acquisition script that imports a forbidden package, one that does not
// compile, and a name nothing serves.
const (
	restrictedAcq = `package bad

import (
	"os/exec"

	"github.com/tesbo/tesbo/sdk"
)

func Score(p sdk.Posterior, batch [][]float64) float64 {
	_ = exec.Command("true")
	return 0
}
`
	typeErrAcq = `package bad

import "github.com/tesbo/tesbo/sdk"

func Score(p sdk.Posterior, batch [][]float64) float64 {
	return "high"
}
`
)

// TestResolveAcqLoadError: an acquisition plugin that exists but fails to
// load is reported with its name and its real load error, not as an unknown
// acquisition; only a name nothing serves is "unknown".
func TestResolveAcqLoadError(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "restricted.go"), restrictedAcq)
	writeFile(t, filepath.Join(dir, "typeerr.go"), typeErrAcq)
	writeFile(t, filepath.Join(dir, "grid.go"), gridScript)
	nop := zerolog.Nop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg, err := loader.Discover(ctx, dir, loader.Options{Logger: &nop})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	cases := []struct {
		name  string
		cause error
		want  []string
	}{
		{"restricted", loader.ErrRestricted, []string{`plugin "restricted"`, `"os/exec"`, "--unrestricted"}},
		{"typeerr", loader.ErrStart, []string{`plugin "typeerr"`, "typeerr.go:6"}},
		{"nope", nil, []string{`unknown acquisition "nope"`, "tes-ep", "random"}},
		{"grid", nil, []string{`unknown acquisition "grid"`}}, // an objective
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := resolveAcq(ctx, reg, c.name)
			if err == nil || p != nil {
				t.Fatalf("resolveAcq(%s) = %v, %v; want an error", c.name, p, err)
			}
			if !errors.As(err, new(usageError)) {
				t.Fatalf("%v is not a usage error", err)
			}
			msg := err.Error()
			if c.cause != nil && (!errors.Is(err, c.cause) || strings.Contains(msg, "unknown acquisition")) {
				t.Fatalf("error %q: want cause %v, not an unknown acquisition", msg, c.cause)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Fatalf("error %q lacks %q", msg, w)
				}
			}
		})
	}

	// Through the CLI: exit 2, one line naming the plugin and the cause,
	// and no database created.
	work := t.TempDir()
	r := cli(t, work, "run", "--plugins", dir, "--objective", "grid", "--acq", "restricted", "--iters", "1", "--db", "x.db")
	lines := errorLines(r.stderr)
	if r.code != 2 || len(lines) != 1 || !strings.Contains(lines[0], `plugin "restricted"`) ||
		!strings.Contains(lines[0], "os/exec") || strings.Contains(lines[0], "unknown acquisition") {
		t.Fatalf("exit %d, stderr lines %q", r.code, lines)
	}
	if _, err := os.Stat(filepath.Join(work, "x.db")); err == nil {
		t.Fatal("database created despite the broken acquisition")
	}
}
