package loader

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/sdk"

	"github.com/tesbo/tesbo/internal/testenv"
)

// TestExamples loads the repository's examples the way the README says:
// the Go objective and suggester directories (built on first use), the two
// scripts, and checks their values.
func TestExamples(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{
		"rosenbrock":    "../../examples/go-objective",
		"quasirandom":   "../../examples/go-suggester",
		"hartmann6.go":  "../../examples/scripts/hartmann6.go",
		"ucb_logdet.go": "../../examples/scripts/ucb_logdet.go",
	})
	r := open(t, dir, Options{CacheDir: t.TempDir()})
	ctx := ctxT(t)
	for _, p := range r.List(ctx) {
		if p.Err != nil {
			t.Fatalf("%s: %v", p.Name, p.Err)
		}
	}
	ros, err := r.Objective(ctx, "rosenbrock")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range [][3]float64{{1, 1, 0}, {0, 0, 1}, {-1, 2, 4 + 100}} {
		if v, err := ros.Evaluate(ctx, tc[:2]); err != nil || v != tc[2] {
			t.Fatalf("rosenbrock(%v) = %v, %v; want %v", tc[:2], v, err, tc[2])
		}
	}
	h6, err := r.Objective(ctx, "hartmann6")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := h6.Info(ctx)
	if !info.Minimize || info.Dim() != 6 || *info.Optimum != -3.32237 {
		t.Fatalf("hartmann6 info %+v", info)
	}
	xstar := []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}
	if v, err := h6.Evaluate(ctx, xstar); err != nil || math.Abs(v-(-3.32237)) > 1e-5 {
		t.Fatalf("hartmann6(x*) = %v, %v", v, err)
	}
	acq, err := r.Acquisition(ctx, "ucb_logdet")
	if err != nil {
		t.Fatal(err)
	}
	// Against the closed form for fakePost: M = I + Σ/σ_n² with Σ = 0.25 on
	// the diagonal and 0.1 off it; for q = 2, det M = (1+25)² − 10².
	batch := [][]float64{{0.1, 0.2}, {0.9, 0.4}}
	got, err := acq.Score(ctx, testPost, batch)
	want := (0.3+1.3)/2 + 2*0.5*math.Log(26*26-10*10)/2
	if err != nil || math.Abs(got-want) > 1e-12 {
		t.Fatalf("ucb_logdet = %v, %v; want %v", got, err, want)
	}
	checkQuasiRandom(t, ctx, r)
}

// checkQuasiRandom checks examples/go-suggester against the R_3 sequence
// u_n = frac(1/2 + n·α) with α = (φ⁻¹, φ⁻², φ⁻³), φ = 1.2207440846057594…
// the root of x⁴ = x + 1 (constants computed to 40 digits elsewhere), for
// a Float, a LogFloat and an Int parameter. With 3 observations and 1
// pending point the batch is terms n = 4, 5.
func checkQuasiRandom(t *testing.T, ctx context.Context, r *Registry) {
	t.Helper()
	s, err := r.Suggester(ctx, "quasirandom")
	if err != nil {
		t.Fatal(err)
	}
	alpha := []float64{0.8191725133961644397, 0.6710436067037892084, 0.5497004779019702669}
	info := sdk.Info{Name: "mixed", Params: []sdk.Param{
		{Name: "a", Kind: sdk.Float, Low: -2, High: 6},
		{Name: "lr", Kind: sdk.LogFloat, Low: 1e-4, High: 1},
		{Name: "k", Kind: sdk.Int, Low: 1, High: 4},
	}}
	req := sdk.SuggestRequest{
		Objective: info, Count: 2, Iter: 2, Seed: 7,
		History: []sdk.Observation{{X: []float64{0, 0.1, 1}, Value: 1}, {X: []float64{1, 0.01, 2}, Value: 2}, {X: []float64{2, 0.5, 3}, Value: 0}},
		Pending: [][]float64{{3, 0.2, 4}},
	}
	pts, err := s.Suggest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range pts {
		n := float64(4 + i)
		u := make([]float64, 3)
		for j := range u {
			_, u[j] = math.Modf(0.5 + n*alpha[j])
		}
		want := []float64{-2 + 8*u[0], math.Pow(10, -4+4*u[1]), math.Floor(1 + 4*u[2])}
		for j := range want {
			if math.Abs(x[j]-want[j]) > 1e-12*math.Max(1, math.Abs(want[j])) {
				t.Fatalf("point %d = %v, want %v (u = %v)", i, x, want, u)
			}
		}
	}
}

// TestPythonObjective runs examples/python-objective through the host when
// a Python with grpcio (Debian python3-grpcio) is installed; under CI it
// must run.
func TestPythonObjective(t *testing.T) {
	dir := testenv.PythonPluginDir(t, "../../examples/python-objective/objective.py")
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	list := r.List(ctx)
	if len(list) != 1 || list[0].Err != nil || list[0].Kind != KindObjective || list[0].Info.Name != "branin (python)" {
		t.Fatalf("List = %+v", list)
	}
	o, err := r.Objective(ctx, "branin-py")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][]float64{{math.Pi, 2.275}, {-math.Pi, 12.275}, {0, 0}} {
		if v, err := o.Evaluate(ctx, x); err != nil || math.Abs(v-branin(x)) > 1e-12 {
			t.Fatalf("branin(%v) = %v, %v; want %v", x, v, err, branin(x))
		}
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPythonObjectiveOpenSSL runs the Python plugin with its openssl
// fallback for the TLS certificate (python3-cryptography hidden).
func TestPythonObjectiveOpenSSL(t *testing.T) {
	py := testenv.NeedPythonGRPC(t)
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl")
	}
	script, _ := filepath.Abs("../../examples/python-objective/objective.py")
	dir := t.TempDir()
	// A module named cryptography that fails to import hides the real one.
	shadow := t.TempDir()
	if err := os.WriteFile(filepath.Join(shadow, "cryptography.py"), []byte("raise ImportError('hidden by test')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nPYTHONPATH=%s exec %s %s\n", shadow, py, script)
	if err := os.WriteFile(filepath.Join(dir, "branin-py"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "branin-py")
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{math.Pi, 2.275}
	if v, err := o.Evaluate(ctx, x); err != nil || math.Abs(v-branin(x)) > 1e-12 {
		t.Fatalf("branin(%v) = %v, %v", x, v, err)
	}
}

func branin(x []float64) float64 {
	b, c, tt := 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 1/(8*math.Pi)
	d := x[1] - b*x[0]*x[0] + c*x[0] - 6
	return d*d + 10*(1-tt)*math.Cos(x[0]) + 10
}

// Example_script loads an objective script from a plugins directory and
// evaluates it; the script runs in a child process of the host.
func Example_script() {
	dir, _ := os.MkdirTemp("", "plugins")
	defer os.RemoveAll(dir)
	src, _ := filepath.Abs("../../examples/scripts/hartmann6.go")
	_ = os.Symlink(src, filepath.Join(dir, "hartmann6.go"))

	ctx := context.Background()
	reg, err := Discover(ctx, dir, Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	for _, p := range reg.List(ctx) {
		fmt.Println(p.Name, p.Kind, p.Source, p.Info.Dim(), "params, minimize:", p.Info.Minimize)
	}
	h6, err := reg.Objective(ctx, "hartmann6")
	if err != nil {
		fmt.Println(err)
		return
	}
	v, err := h6.Evaluate(ctx, []float64{0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573})
	fmt.Printf("f(x*) = %.4f %v\n", v, err)
	// Output:
	// hartmann6 objective script 6 params, minimize: true
	// f(x*) = -3.3224 <nil>
}

var _ sdk.Posterior = fakePost{}

// pythonWrapperDir is a plugins directory holding a symlink to the Python
// example's wrapper, as its README says to install it.
func pythonWrapperDir(t *testing.T) string {
	return pluginsDir(t, nil, map[string]string{"branin-py": "../../examples/python-objective/branin-py"})
}

// decoyPython puts first on PATH a python3 without grpc (as pyenv's shim
// often is) and returns its path.
func decoyPython(t *testing.T) string {
	dir := t.TempDir()
	py := filepath.Join(dir, "python3")
	script := "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'grpc'\" >&2\nexit 1\n"
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("TESBO_PYTHON", "")
	os.Unsetenv("TESBO_PYTHON")
	return py
}

// TestPythonWrapperFindsGRPC: the example's wrapper runs the plugin with
// /usr/bin/python3 when the python3 first on PATH cannot import grpc.
func TestPythonWrapperFindsGRPC(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-c", "import grpc").Run() != nil {
		testenv.Need(t, "/usr/bin/python3 cannot import grpc: install it (apt-get install python3-grpcio python3-cryptography)")
	}
	decoyPython(t)
	r := open(t, pythonWrapperDir(t), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "branin-py")
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{math.Pi, 2.275}
	if v, err := o.Evaluate(ctx, x); err != nil || math.Abs(v-branin(x)) > 1e-12 {
		t.Fatalf("branin(%v) = %v, %v; want %v", x, v, err, branin(x))
	}
}

// TestPythonWrapperNoGRPC: when no candidate Python can import grpc, the
// wrapper's failure says what to install.
func TestPythonWrapperNoGRPC(t *testing.T) {
	t.Setenv("TESBO_PYTHON", decoyPython(t))
	r := open(t, pythonWrapperDir(t), Options{})
	_, err := r.Objective(ctxT(t), "branin-py")
	wantErr(t, err, "branin-py", ErrStart, "exit status 1", "no Python can import grpc", "apt-get install python3-grpcio", "TESBO_PYTHON")
}

// A Python objective's print() and what native code writes to fd 1 after
// the handshake reach the host's log (objective.py sends them to stderr;
// go-plugin would drain stdout unread).
func TestPythonPrintLogged(t *testing.T) {
	examples, err := filepath.Abs("../../examples/python-objective")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "printing.py")
	src := fmt.Sprintf(`import os, sys
sys.path.insert(0, %q)
import objective

class Printing(objective.Objective):
    def Evaluate(self, request, context):
        print("python print at", list(request.x))
        os.write(1, b"native write\n")
        return super().Evaluate(request, context)

sys.exit(objective.serve(Printing()))
`, examples)
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf testenv.SyncBuffer
	r := open(t, testenv.PythonPlugin(t, script, "printing-py"), Options{Logger: zerolog.New(&buf)})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "printing-py")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Evaluate(ctx, []float64{1, 2}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "python print at [1.0, 2.0]") || !strings.Contains(buf.String(), "native write") {
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's prints are not in the log:\n%s", buf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
