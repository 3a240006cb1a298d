package tesbo

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// TestOutsidePluginBlock pastes sdk/README.md's block for a plugin outside
// this repository into a shell, as written, the way a new user would on a
// machine where tesbo is not published: with GOPROXY=off every module must
// come from the module cache that `go mod download` (scripts/deps.sh, run
// by make test) fills. The block makes the plugin's module, builds it and
// runs a study with it through tesbo-host.
func TestOutsidePluginBlock(t *testing.T) {
	t.Parallel()
	home, out := runDocBlock(t, filepath.Join("sdk", "README.md"), "### A plugin outside this repository")
	for _, want := range []string{"myplugins/rosenbrock/go.mod", "myplugins.db"} {
		if _, err := os.Stat(filepath.Join(home, want)); err != nil {
			t.Errorf("after the block: %v\n%s", err, out)
		}
	}
}

// TestPythonOwnObjectiveBlock runs the Python README's block that writes
// an objective in a directory of its own, reusing objective.py through
// run-py, and runs a study with it.
func TestPythonOwnObjectiveBlock(t *testing.T) {
	t.Parallel()
	testenv.NeedPythonGRPC(t)
	home, out := runDocBlock(t, filepath.Join("examples", "python-objective", "README.md"), "## Your own objective, in another directory")
	if _, err := os.Stat(filepath.Join(home, "pyplugins.db")); err != nil {
		t.Errorf("after the block: %v\n%s", err, out)
	}
}

// runDocBlock runs the sh block under heading in the Markdown file path
// with sh -e, exactly as written, and returns the HOME it ran in and its
// output; it fails t when the block fails. HOME is a fresh directory whose
// src/tesbo is this checkout (the blocks' TESBO), and GOPROXY=off: a block
// must not need the network.
func runDocBlock(t *testing.T, path, heading string) (home string, out []byte) {
	t.Helper()
	var block *fence
	for _, f := range fences(t, path) {
		if f.Heading == heading && f.Lang == "sh" {
			block = &f
			break
		}
	}
	if block == nil {
		t.Fatalf("%s has no sh block under %q", path, heading)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	home = t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(home, "src", "tesbo")); err != nil {
		t.Fatal(err)
	}

	// A new HOME moves go's default caches: keep the real ones, so that
	// the module cache is the filled one and builds stay cached.
	goenv, err := exec.Command("go", "env", "GOPATH", "GOMODCACHE", "GOCACHE", "GOENV", "GOFLAGS").Output()
	if err != nil {
		t.Fatalf("go env: %v", err)
	}
	v := strings.Split(strings.TrimRight(string(goenv), "\n"), "\n")
	if len(v) != 5 {
		t.Fatalf("go env printed %q", goenv)
	}
	cmd := exec.Command("sh", "-e", "-x", "-c", block.Code)
	cmd.Dir = home
	cmd.Env = append(os.Environ(),
		"HOME="+home, "GOPATH="+v[0], "GOMODCACHE="+v[1], "GOCACHE="+v[2], "GOENV="+v[3],
		"GOFLAGS="+v[4], "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s:%d: the block failed: %v (a module missing from the cache? run go mod download in the checkout)\n%s", path, block.Line, err, out)
	}
	return home, out
}
