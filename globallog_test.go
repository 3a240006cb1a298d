package tesbo

import (
	"go/parser"
	"go/token"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// TestNoGlobalLogger fails when non-test Go code imports zerolog's global
// logger package: a program embedding tesbo gets exactly the logs it asks
// for (host.Options.Logger, loader.Options.Logger; none means none), which
// a package logging through the global logger would break.
func TestNoGlobalLogger(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z", "*.go").Output()
	if err != nil {
		testenv.Need(t, "git ls-files (the test reads the tracked files): "+err.Error())
	}
	fset := token.NewFileSet()
	for _, path := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if path == "" || strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			continue // deleted in the work tree, or not Go yet; go vet reports that
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "github.com/rs/zerolog/log" {
				t.Errorf("%s imports %s: log to the logger the caller gives instead", path, p)
			}
		}
	}
}
