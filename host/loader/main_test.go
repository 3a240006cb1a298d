package loader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// testBin is the directory holding the test plugins of testdata/plugins,
// built once per source hash (TestMain) and reused across test runs.
var testBin string

func TestMain(m *testing.M) {
	RunScriptRunnerIfRequested()
	if os.Getenv(envTestHost) != "" {
		os.Exit(testHostMain())
	}
	if sock := os.Getenv(envFloorServe); sock != "" {
		os.Exit(serveFloorMain(sock))
	}
	for env, mode := range testModes {
		if os.Getenv(env) != "" {
			os.Exit(mode())
		}
	}
	dir, err := buildTestPlugins()
	if err != nil {
		fmt.Fprintln(os.Stderr, "build test plugins:", err)
		os.Exit(2)
	}
	testBin = dir
	os.Exit(m.Run())
}

// testModes are helper modes of the test binary (a host run in a
// subprocess), by the environment variable that selects them; platform
// test files add theirs.
var testModes = map[string]func() int{}

// testPlugins are the test plugins built as executables.
var testPlugins = []string{
	"objective", "multi", "suggester", "acquisition", "crashstart", "stdoutjunk",
	"hangstart", "exitmid", "panic", "hang", "nan", "badbounds", "badkind", "noparams",
	"neighbours", "reporting",
}

func buildTestPlugins() (string, error) {
	h := sha256.New()
	for _, root := range []string{"testdata/plugins", "../../sdk", "../../go.mod", "../../go.sum"} {
		s, err := treeHash(root)
		if err != nil {
			return "", err
		}
		h.Write([]byte(s))
	}
	h.Write([]byte(runtime.Version()))
	key := hex.EncodeToString(h.Sum(nil))[:16]
	dir := filepath.Join(os.TempDir(), "tesbo-loader-testplugins-"+key)
	if fileExists(filepath.Join(dir, ".complete")) {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "tesbo-loader-build-")
	if err != nil {
		return "", err
	}
	args := []string{"build", "-buildvcs=false", "-ldflags=-s -w", "-o", tmp + string(filepath.Separator)}
	for _, p := range testPlugins {
		args = append(args, "./testdata/plugins/"+p)
	}
	cmd := exec.Command("go", args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, dir); err != nil {
		if fileExists(filepath.Join(dir, ".complete")) { // a concurrent run won
			os.RemoveAll(tmp)
			return dir, nil
		}
		return "", err
	}
	return dir, nil
}

// pluginsDir makes a plugins directory holding the named test executables
// (symlinks) and files/directories given as name → source path.
func pluginsDir(t testing.TB, bins []string, links map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, b := range bins {
		if err := os.Symlink(filepath.Join(testBin, b), filepath.Join(dir, b)); err != nil {
			t.Fatal(err)
		}
	}
	for name, src := range links {
		abs, err := filepath.Abs(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testLogger writes the loader's and plugins' logs to the test log.
func testLogger(t testing.TB) zerolog.Logger {
	return zerolog.New(zerolog.ConsoleWriter{Out: testWriter{t}, NoColor: true}).Level(zerolog.InfoLevel)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// open discovers dir with opts (logging to t) and closes it at cleanup.
func open(t testing.TB, dir string, opts Options) *Registry {
	t.Helper()
	if reflect.ValueOf(opts.Logger).IsZero() { // no logger given: log to t
		opts.Logger = testLogger(t)
	}
	r, err := Discover(context.Background(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
