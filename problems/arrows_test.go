package problems

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is the import path of the repository's module.
const module = "github.com/tesbo/tesbo/"

// allowedImports are the module's packages (prefixes) that the problem
// packages may import: each other and the SDK. Anything else of the module
// (bench, plugins, host, store, ...) would point an arrow back up at a
// consumer of the problems.
var allowedImports = []string{module + "problems/", module + "sdk"}

// TestArrows fails when a Go file under problems/ imports a package of the
// module other than the problem packages and the SDK.
func TestArrows(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if strings.HasPrefix(p, module) && !allowed(p) {
				t.Errorf("problems/%s imports %s: problem packages may import only problems/... and sdk (bench and plugins/synthetic import them, not the other way)", filepath.ToSlash(path), p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allowed(p string) bool {
	for _, a := range allowedImports {
		if strings.HasPrefix(p, a) {
			return true
		}
	}
	return false
}
