package loader

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// outsidePlugin is an objective plugin in its own module outside the
// checkout: x + offset.Value, the offset coming from a second local module
// so that the test can change a replaced dependency.
const outsidePlugin = `package main

import (
	"context"

	"example.com/offset"
	"github.com/tesbo/tesbo/sdk"
)

type objective struct{}

func (objective) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "outside", Params: []sdk.Param{{Name: "x", Kind: sdk.Float, Low: 0, High: 1}}}, nil
}

func (objective) Evaluate(_ context.Context, x []float64) (float64, error) {
	return x[0] + offset.Value, nil
}

func main() { sdk.ServeObjective(objective{}) }
`

// TestPluginModuleOutsideCheckout follows the route moduleHint (and
// sdk/README.md) gives for a plugin outside this repository while tesbo is
// not published — go mod init, a replace directive to the checkout, the
// checkout's go.sum, go get — offline (GOPROXY=off, from the module cache
// that `make test` fills), then lets the loader build and run it. Editing
// a module the plugin replaces by a local directory rebuilds it.
func TestPluginModuleOutsideCheckout(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	tmp := t.TempDir()
	if findGoMod(tmp) != "" {
		t.Skip("the temporary directory is inside a Go module")
	}
	lib := filepath.Join(tmp, "offset")
	writeFile(t, filepath.Join(lib, "go.mod"), "module example.com/offset\n\ngo 1.22\n")
	writeFile(t, filepath.Join(lib, "offset.go"), "package offset\n\nconst Value = 1\n")
	src := filepath.Join(tmp, "plugins", "outside")
	writeFile(t, filepath.Join(src, "main.go"), outsidePlugin)
	goSum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	goIn(t, src, "mod", "init", "example.com/outside")
	goIn(t, src, "mod", "edit", "-replace", "github.com/tesbo/tesbo="+root, "-replace", "example.com/offset="+lib)
	writeFile(t, filepath.Join(src, "go.sum"), string(goSum))
	goIn(t, src, "get", "github.com/tesbo/tesbo/sdk", "example.com/offset")

	cache := t.TempDir()
	evaluate := func() float64 {
		t.Helper()
		r := open(t, filepath.Dir(src), Options{CacheDir: cache})
		defer r.Close()
		ctx := ctxT(t)
		o, err := r.Objective(ctx, "outside")
		if err != nil {
			t.Fatal(err)
		}
		v, err := o.Evaluate(ctx, []float64{0.25})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if v := evaluate(); v != 1.25 {
		t.Fatalf("Evaluate(0.25) = %v, want 1.25", v)
	}
	writeFile(t, filepath.Join(lib, "offset.go"), "package offset\n\nconst Value = 2\n")
	if v := evaluate(); v != 2.25 {
		t.Fatalf("after editing the replaced module Evaluate(0.25) = %v, want 2.25 (a stale cached binary?)", v)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// goIn runs the go command in dir and fails the test with its output.
func goIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}
