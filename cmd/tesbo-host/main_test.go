package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/internal/storebridge"
	"github.com/tesbo/tesbo/store"
)

// Built once in TestMain: the CLI binary and a plugins directory holding the
// synthetic plugin (prebuilt executable), an integer-space objective script,
// a continuous objective script without a noise-free evaluation and a broken
// script.
var (
	binPath    string
	pluginsDir string
)

const gridScript = `package grid

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "grid", Params: []sdk.Param{
		{Name: "a", Kind: sdk.Int, Low: 0, High: 2},
		{Name: "b", Kind: sdk.Int, Low: 0, High: 2},
	}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	return -(x[0]-1)*(x[0]-1) - (x[1]-2)*(x[1]-2), nil
}
`

// bowlScript is a continuous objective with a declared optimum but no
// noise-free evaluation (like a real-world plugin): maximum 0 at (0.3, 0.6).
const bowlScript = `package bowl

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	opt := 0.0
	return sdk.Info{Name: "bowl", Optimum: &opt, Params: []sdk.Param{
		{Name: "u", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "v", Kind: sdk.Float, Low: 0, High: 1},
	}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	return -(x[0]-0.3)*(x[0]-0.3) - (x[1]-0.6)*(x[1]-0.6), nil
}
`

// wideScript is an objective with more parameters than host.MaxDim.
const wideScript = `package wide

import (
	"context"
	"fmt"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	ps := make([]sdk.Param, 10000)
	for i := range ps {
		ps[i] = sdk.Param{Name: fmt.Sprint("x", i), Kind: sdk.Float, Low: 0, High: 1}
	}
	return sdk.Info{Name: "wide", Params: ps}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) { return x[0], nil }
`

func TestMain(m *testing.M) {
	loader.RunScriptRunnerIfRequested() // in-process loaders re-execute this binary for scripts
	dir, err := os.MkdirTemp("", "tesbo-host-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		binPath = filepath.Join(dir, "tesbo-host")
		pluginsDir = filepath.Join(dir, "plugins")
		if err := os.Mkdir(pluginsDir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, b := range [][]string{
			{"build", "-o", binPath, "."},
			{"build", "-o", filepath.Join(pluginsDir, "synthetic"), "../../plugins/synthetic"},
		} {
			cmd := exec.Command("go", b...)
			cmd.Stderr = os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintln(os.Stderr, "go", strings.Join(b, " "), ":", err)
				return 1
			}
		}
		os.WriteFile(filepath.Join(pluginsDir, "grid.go"), []byte(gridScript), 0o644)
		os.WriteFile(filepath.Join(pluginsDir, "bowl.go"), []byte(bowlScript), 0o644)
		os.WriteFile(filepath.Join(pluginsDir, "wide.go"), []byte(wideScript), 0o644)
		os.WriteFile(filepath.Join(pluginsDir, "broken.go"), []byte("package broken\nfunc Info( {\n"), 0o644)
		return m.Run()
	}()
	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

// cli runs the binary in dir with args and returns its outputs.
func cli(t *testing.T, dir string, args ...string) result {
	t.Helper()
	return runBinary(t, dir, 3*time.Minute, nil, args...)
}

// runBinary runs the binary in dir with args, TESBO_PLUGINS set to the
// test plugins directory and then env (later entries win), killing it after
// timeout, and returns its outputs.
func runBinary(t *testing.T, dir string, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	return runBinaryInput(t, dir, timeout, env, "", args...)
}

// runBinaryInput is runBinary with stdin.
func runBinaryInput(t *testing.T, dir string, timeout time.Duration, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
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

// checkUsageError fails t unless r is a refused command: exit 2, nothing on
// stdout, and exactly one error line, prefixed "tesbo-host: ", that holds
// every string of want.
func checkUsageError(t *testing.T, r result, want []string) {
	t.Helper()
	if r.code != 2 {
		t.Fatalf("exit %d, want 2; stderr:\n%s", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Fatalf("stdout: %q", r.stdout)
	}
	lines := errorLines(r.stderr)
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "tesbo-host: ") {
		t.Fatalf("want one error line, got %q", lines)
	}
	for _, w := range want {
		if !strings.Contains(lines[0], w) {
			t.Fatalf("error %q lacks %q", lines[0], w)
		}
	}
}

// errorLines returns the stderr lines that are not JSON log records.
func errorLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l == "" || (strings.HasPrefix(l, "{") && json.Valid([]byte(l))) {
			continue
		}
		out = append(out, l)
	}
	return out
}

func loadTrials(t *testing.T, dbPath, study string) ([]store.Trial, []store.Iteration) {
	t.Helper()
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := db.Study(context.Background(), study)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := db.Trials(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	its, err := db.Iterations(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	return tr, its
}

func key(x []float64) string {
	b, _ := json.Marshal(x)
	return string(b)
}

func sameTrials(t *testing.T, a, b []store.Trial) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("trial counts differ: %d vs %d", len(a), len(b))
	}
	for i := range a {
		if key(a[i].X) != key(b[i].X) || key(a[i].U) != key(b[i].U) || a[i].Status != b[i].Status ||
			a[i].Value != b[i].Value || a[i].Iteration != b[i].Iteration {
			t.Fatalf("trial %d differs:\n%+v\n%+v", i, a[i], b[i])
		}
	}
}

// snapshot records every file in dir (name → contents).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			m[p] = string(b)
		}
		return nil
	})
	return m
}

func sameSnapshot(t *testing.T, before, after map[string]string) {
	t.Helper()
	var names []string
	for n := range after {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(before) != len(after) {
		t.Fatalf("files written: now %v", names)
	}
	for n, c := range before {
		if after[n] != c {
			t.Fatalf("file %s changed", n)
		}
	}
}

// parseRecords decodes complete --json lines, checking the exact field set.
func parseRecords(t *testing.T, stdout string) []map[string]json.RawMessage {
	t.Helper()
	want := []string{"batch", "best_observed", "best_observed_x", "best_value", "best_x", "eval_s", "evals", "fit_s", "iter", "propose_s", "regret", "values"}
	var recs []map[string]json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout line is not a JSON object: %q: %v", sc.Text(), err)
		}
		var keys []string
		for k := range m {
			switch k {
			case "choices", "best_choices", "best_observed_choices": // spaces with categoricals
				continue
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if strings.Join(keys, ",") != strings.Join(want, ",") {
			t.Fatalf("record fields %v, want %v", keys, want)
		}
		recs = append(recs, m)
	}
	return recs
}

type record struct {
	Iter      int         `json:"iter"`
	Evals     int         `json:"evals"`
	Batch     [][]float64 `json:"batch"`
	Values    []*float64  `json:"values"`
	BestValue *float64    `json:"best_value"`
	BestX     []float64   `json:"best_x"`
	Regret    *float64    `json:"regret"`
	FitS      float64     `json:"fit_s"`

	BestObserved  *float64  `json:"best_observed"`
	BestObservedX []float64 `json:"best_observed_x"`
	ProposeS      float64   `json:"propose_s"`
	EvalS         float64   `json:"eval_s"`
}

func decode(t *testing.T, m map[string]json.RawMessage) record {
	t.Helper()
	b, _ := json.Marshal(m)
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// hostStorage is host's handle on a database a test opened with store.
func hostStorage(db store.Storage) *host.Storage { return storebridge.Wrap(db).(*host.Storage) }
