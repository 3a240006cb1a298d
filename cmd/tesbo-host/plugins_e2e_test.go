package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"

	"github.com/tesbo/tesbo/internal/testenv"
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
// Its longer timeout leaves room for building a Go source plugin on demand.
func cliEnv(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	return runBinary(t, dir, 5*time.Minute, env, args...)
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
	reg, err := loader.Discover(ctx, dir, loader.Options{Logger: nop})
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
			if err == nil || p != (customAcq{}) {
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

// e2eObjective is what a test knows about the objective a run optimizes.
type e2eObjective struct {
	f         func(x []float64) float64
	low, high []float64
	minimize  bool
	optimum   float64
	tol       float64 // relative tolerance on f (another language's libm may differ in the last bits)
}

// e2eStudy is one small 'tesbo-host run --json'.
type e2eStudy struct {
	plugins, objective, acq string
	env                     []string // extra environment (later entries win)
	iters, batch, init      int
}

// runE2E runs the study and checks what every run must satisfy: exit 0, no
// error lines, one record per iteration matching the stored trials, every
// trial complete with f's value at a point inside the bounds, no iteration
// that fell back to random points instead of the acquisition's proposal,
// and best_value/regret consistent with a stored evaluation (none of these
// objectives has a noise-free evaluation, so the recommendation is an
// evaluated point). It returns the records and the stored trials.
func runE2E(t *testing.T, st e2eStudy, obj e2eObjective) ([]record, []store.Trial) {
	t.Helper()
	work := t.TempDir()
	r := cliEnv(t, work, st.env, "run", "--plugins", st.plugins, "--objective", st.objective, "--acq", st.acq,
		"--iters", fmt.Sprint(st.iters), "--batch", fmt.Sprint(st.batch), "--init", fmt.Sprint(st.init),
		"--seed", "5", "--db", "e.db", "--study", "e", "--json", "--log-level", "warn")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if lines := errorLines(r.stderr); len(lines) != 0 {
		t.Fatalf("stderr carries non-log lines: %q", lines)
	}
	if strings.Contains(r.stderr, "instead of the acquisition's") {
		t.Fatalf("the acquisition %s did not propose; the host fell back to random points:\n%s", st.acq, r.stderr)
	}
	var recs []record
	for _, m := range parseRecords(t, r.stdout) {
		recs = append(recs, decode(t, m))
	}
	trials, its := loadTrials(t, filepath.Join(work, "e.db"), "e")
	if len(recs) != st.iters || len(trials) != st.init+st.iters*st.batch || len(its) != st.iters+1 {
		t.Fatalf("%d records, %d trials, %d iterations stored; want %d, %d, %d",
			len(recs), len(trials), len(its), st.iters, st.init+st.iters*st.batch, st.iters+1)
	}
	for _, tr := range trials {
		if tr.Status != store.Complete {
			t.Fatalf("trial %+v not complete", tr)
		}
		for j, v := range tr.X {
			if v < obj.low[j] || v > obj.high[j] {
				t.Fatalf("trial %d: %v outside the bounds %v..%v", tr.ID, tr.X, obj.low, obj.high)
			}
		}
		if want := obj.f(tr.X); math.Abs(tr.Value-want) > obj.tol*math.Max(1, math.Abs(want)) {
			t.Fatalf("trial %d: f(%v) = %v, want %v", tr.ID, tr.X, tr.Value, want)
		}
	}
	for i := 1; i <= st.iters; i++ {
		var model struct {
			Fallback string `json:"fallback"`
		}
		if err := json.Unmarshal(its[i].Model, &model); err != nil || model.Fallback != "" {
			t.Fatalf("iteration %d model %s: fell back (%v)", i, its[i].Model, err)
		}
	}
	for i, rec := range recs {
		if rec.Iter != i+1 || rec.Evals != st.init+(i+1)*st.batch || len(rec.Batch) != st.batch || len(rec.Values) != st.batch {
			t.Fatalf("record %d: %+v", i, rec)
		}
		for k := range rec.Batch {
			tr := trials[st.init+i*st.batch+k]
			if tr.Iteration != rec.Iter || key(tr.X) != key(rec.Batch[k]) || rec.Values[k] == nil || *rec.Values[k] != tr.Value {
				t.Fatalf("record %d point %d: %v = %v, stored %+v", i, k, rec.Batch[k], rec.Values[k], tr)
			}
		}
		if rec.BestValue == nil || rec.Regret == nil {
			t.Fatalf("record %d: best_value %v regret %v", i, rec.BestValue, rec.Regret)
		}
		stored := false
		for _, tr := range trials[:rec.Evals] {
			stored = stored || key(tr.X) == key(rec.BestX) && tr.Value == *rec.BestValue
		}
		regret := obj.optimum - *rec.BestValue
		if obj.minimize {
			regret = -regret
		}
		if !stored || math.Abs(*rec.Regret-regret) > 1e-12 {
			t.Fatalf("record %d: best %v = %v (stored: %v), regret %v, want %v", i, rec.BestX, *rec.BestValue, stored, *rec.Regret, regret)
		}
	}
	return recs, trials
}

// goBuildEnv isolates the plugin build cache of a test (the user cache
// directory moves to a temporary one) while keeping the go command's own
// build cache, which XDG_CACHE_HOME would otherwise move too.
func goBuildEnv(t *testing.T) (env []string, pluginCache string) {
	t.Helper()
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	xdg := t.TempDir()
	return []string{"XDG_CACHE_HOME=" + xdg, "GOCACHE=" + strings.TrimSpace(string(out))}, filepath.Join(xdg, "tesbo", "plugins")
}

// TestE2EGoSourceObjective: examples/go-objective as a Go source directory
// in the plugins directory is built on first use ('plugins' lists it with
// its space), the build is cached by source hash and reused by 'run', and
// the host optimizes it.
func TestE2EGoSourceObjective(t *testing.T) {
	dir := t.TempDir()
	linkInto(t, dir, "rosenbrock", "../../examples/go-objective")
	env, cache := goBuildEnv(t)
	r := cliEnv(t, t.TempDir(), env, "plugins", "--plugins", dir)
	want := "rosenbrock  objective  go-source  x float [-2, 2]; y float [-1, 3]; minimize; f* = 0"
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("exit %d; plugins output lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	built := func() os.FileInfo {
		t.Helper()
		builds, err := os.ReadDir(cache)
		if err != nil || len(builds) != 1 || !strings.HasPrefix(builds[0].Name(), "rosenbrock-") {
			t.Fatalf("plugin build cache %s holds %v (%v); want one rosenbrock build", cache, builds, err)
		}
		fi, err := os.Stat(filepath.Join(cache, builds[0].Name(), "rosenbrock"))
		if err != nil {
			t.Fatal(err)
		}
		return fi
	}
	first := built()
	rosenbrock := func(x []float64) float64 {
		a, b := 1-x[0], x[1]-x[0]*x[0]
		return a*a + 100*b*b
	}
	runE2E(t, e2eStudy{plugins: dir, objective: "rosenbrock", acq: "ei", env: env, iters: 3, batch: 2, init: 3},
		e2eObjective{f: rosenbrock, low: []float64{-2, -1}, high: []float64{2, 3}, minimize: true, optimum: 0, tol: 0})
	if again := built(); !again.ModTime().Equal(first.ModTime()) {
		t.Fatalf("run rebuilt the plugin (binary modified %v, then %v) instead of reusing the cached build", first.ModTime(), again.ModTime())
	}
}

// bowlObjective is what the tests know about bowlScript (main_test.go), the
// objective script they optimize.
var bowlObjective = e2eObjective{
	f:   func(x []float64) float64 { return -(x[0]-0.3)*(x[0]-0.3) - (x[1]-0.6)*(x[1]-0.6) },
	low: []float64{0, 0}, high: []float64{1, 1}, optimum: 0, tol: 0,
}

// TestE2EAcquisitionScript: examples/scripts/ucb_logdet.go, an acquisition
// script, proposes every batch (--acq by its file name): no iteration falls
// back to random points.
func TestE2EAcquisitionScript(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bowl.go"), bowlScript)
	linkInto(t, dir, "ucb_logdet.go", "../../examples/scripts/ucb_logdet.go")
	runE2E(t, e2eStudy{plugins: dir, objective: "bowl", acq: "ucb_logdet", iters: 3, batch: 2, init: 3}, bowlObjective)
}

// TestE2ESuggester: examples/go-suggester (a Go source directory serving
// sdk.ServeSuggester) proposes every batch: the points are exactly the
// terms of its R_2 sequence, u_n = frac(1/2 + n·α) with α = (φ⁻¹, φ⁻²),
// φ = 1.3247179572447460… the root of x³ = x + 1, continued from the number
// of evaluations the study has.
func TestE2ESuggester(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bowl.go"), bowlScript)
	linkInto(t, dir, "quasirandom", "../../examples/go-suggester")
	env, _ := goBuildEnv(t)
	r := cliEnv(t, t.TempDir(), env, "plugins", "--plugins", dir)
	if want := "quasirandom  suggester  go-source"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("exit %d; plugins output lacks %q:\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	const iters, batch, init = 3, 2, 3
	recs, _ := runE2E(t, e2eStudy{plugins: dir, objective: "bowl", acq: "quasirandom", env: env, iters: iters, batch: batch, init: init}, bowlObjective)
	alpha := []float64{0.75487766624669276005, 0.56984029099805326591}
	for i, rec := range recs {
		for k, x := range rec.Batch {
			n := float64(init + i*batch + k)
			for j := range x {
				_, u := math.Modf(0.5 + n*alpha[j])
				if math.Abs(x[j]-u) > 1e-9 {
					t.Fatalf("iteration %d point %d = %v; coordinate %d should be the sequence's term %v = %v", rec.Iter, k, x, j, n, u)
				}
			}
		}
	}
}

// TestE2EPythonObjective: examples/python-objective, a gRPC objective in
// Python behind an executable wrapper, is optimized through the CLI. It
// needs python3-grpcio: skipped without it, except under CI (CI set),
// where a missing grpc fails the test.
func TestE2EPythonObjective(t *testing.T) {
	dir := testenv.PythonPluginDir(t, "../../examples/python-objective/objective.py")
	branin := func(x []float64) float64 {
		b, c, tt := 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 1/(8*math.Pi)
		d := x[1] - b*x[0]*x[0] + c*x[0] - 6
		return d*d + 10*(1-tt)*math.Cos(x[0]) + 10
	}
	runE2E(t, e2eStudy{plugins: dir, objective: "branin-py", acq: "ei", iters: 3, batch: 2, init: 3},
		e2eObjective{f: branin, low: []float64{-5, 0}, high: []float64{10, 15}, minimize: true, optimum: 0.397887, tol: 1e-12})
}

// envProbeScript scores 1 when it sees the secret-looking variable the
// test sets, else 0 (unrestricted: it imports os).
const envProbeScript = `package envprobe

import (
	"context"
	"os"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	if os.Getenv("TESBO_TEST_API_TOKEN") == "let-me-in" {
		return 1, nil
	}
	return 0, nil
}
`

// TestPluginEnvFlag: a variable the secrets deny-list matches (*TOKEN*)
// does not reach a plugin unless --plugin-env names it; a malformed name is
// a usage error.
func TestPluginEnvFlag(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "envprobe.go"), envProbeScript)
	env := []string{"TESBO_TEST_API_TOKEN=let-me-in"}
	args := []string{"run", "--plugins", dir, "--objective", "envprobe", "--acq", "random",
		"--init", "1", "--iters", "1", "--unrestricted", "--json"}
	for _, tc := range []struct {
		extra []string
		want  float64
	}{
		{nil, 0},
		{[]string{"--plugin-env", "TESBO_TEST_API_TOKEN"}, 1},
	} {
		a := append(append([]string(nil), args...), tc.extra...)
		r := cliEnv(t, t.TempDir(), env, a...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.extra, r.code, r.stderr)
		}
		recs := parseRecords(t, r.stdout)
		if len(recs) == 0 {
			t.Fatalf("%v: no records", tc.extra)
		}
		rec := decode(t, recs[len(recs)-1])
		if rec.BestValue == nil || *rec.BestValue != tc.want {
			t.Errorf("%v: best_value %v, want %v (the plugin saw the variable: %v)", tc.extra, rec.BestValue, tc.want, tc.want == 1)
		}
	}
	r := cliEnv(t, t.TempDir(), env, append(args, "--plugin-env", "A=B")...)
	checkUsageError(t, r, []string{"--plugin-env", "A=B"})
}

// describeSpace shows a conditional parameter with its condition.
func TestDescribeSpaceConditions(t *testing.T) {
	info := sdk.Info{Params: []sdk.Param{
		{Name: "opt", Kind: sdk.Categorical, Choices: []string{"sgd", "momentum", "adam"}},
		{Name: "m", Kind: sdk.Float, Low: 0, High: 1, ActiveIf: &sdk.Condition{Parent: "opt", Values: []string{"momentum"}}},
		{Name: "lr", Kind: sdk.LogFloat, Low: 1e-4, High: 1, ActiveIf: &sdk.Condition{Parent: "opt", Values: []string{"sgd", "momentum"}}},
	}}
	want := "opt categorical {sgd, momentum, adam}; m float [0, 1] if opt = momentum; lr logfloat [0.0001, 1] if opt ∈ {sgd, momentum}"
	if got := describeSpace(info); got != want {
		t.Fatalf("describeSpace:\n got %s\nwant %s", got, want)
	}
}
