package arrows

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// module is the import path of the repository's module.
const module = "github.com/tesbo/tesbo"

// rule constrains the module imports of the Go files under one directory.
type rule struct {
	dir       string   // slash path from the repository root
	only      []string // if set, the only module packages (prefixes) allowed
	not       []string // module packages (prefixes) not allowed
	skipTests bool     // the rule is for the code, not its _test.go files
	why       string
}

var rules = []rule{
	{
		dir:  "problems",
		only: []string{"problems", "sdk", "pareto"},
		why:  "bench and plugins/synthetic import the problem packages, not the other way (pareto is pure mathematics on the bottom layer)",
	},
	{
		dir: "plugins",
		not: []string{"store"},
		why: "no plugin reads the host's database: it reads studies as the CLI prints them (e.g. `tesbo-host trials --format json`)",
	},
	// The layers, bottom up: store, sdk and internal; gp; acq; tes; host;
	// serve and bench; cmd. A package imports only layers below its own
	// (its tests may reach higher, e.g. to run a study end to end).
	{dir: "store", not: above("store"), skipTests: true, why: layers},
	{dir: "sdk", not: above("sdk"), skipTests: true, why: layers},
	{dir: "pareto", not: above("pareto"), skipTests: true, why: layers},
	{dir: "gp", not: above("gp"), skipTests: true, why: layers},
	{dir: "acq", not: above("acq"), skipTests: true, why: layers},
	{dir: "tes", not: above("tes"), skipTests: true, why: layers},
	{dir: "host", not: above("host"), skipTests: true, why: layers},
	{dir: "serve", not: above("serve"), skipTests: true, why: layers},
	{dir: "bench", not: above("bench"), skipTests: true, why: layers},
	{
		dir:       "cmd/tesbo-host",
		not:       []string{"store"},
		skipTests: true, // tests look inside databases
		why:       "the CLI reaches study databases through host (host.Storage), so storage stays host's business",
	},
	{
		dir:       "plugins",
		not:       []string{"host", "bench", "serve", "cmd"},
		skipTests: true, // end-to-end tests may load a plugin through host/loader
		why:       "a plugin talks to the host through the SDK",
	},
}

// layers is why the layer rules exist.
const layers = "the packages form layers (cmd → serve, bench → host → tes → acq → gp, with store, sdk, internal and pareto at the bottom), and a layer imports only the ones below it"

// order lists the layers bottom up; packages on one line share a layer.
var order = [][]string{{"store", "sdk", "internal", "pareto"}, {"gp"}, {"acq"}, {"tes"}, {"host"}, {"serve", "bench"}, {"cmd"}}

// above lists the packages in layers above dir's.
func above(dir string) []string {
	var out []string
	found := false
	for _, layer := range order {
		if found {
			out = append(out, layer...)
		}
		for _, p := range layer {
			if p == dir {
				found = true
			}
		}
	}
	return out
}

// under reports whether the module package p is rel or below it.
func under(p, rel string) bool {
	return p == module+"/"+rel || strings.HasPrefix(p, module+"/"+rel+"/")
}

// TestArrows fails for every import that breaks a rule.
func TestArrows(t *testing.T) {
	root := testenv.RepoRoot(t)
	for _, r := range rules {
		imports, err := moduleImports(filepath.Join(root, filepath.FromSlash(r.dir)))
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range imports {
			if r.skipTests && strings.HasSuffix(im.file, "_test.go") {
				continue
			}
			if bad := r.breaks(im.pkg); bad != "" {
				t.Errorf("%s/%s imports %s, which %s: %s", r.dir, im.file, im.pkg, bad, r.why)
			}
		}
	}
}

// breaks says how importing module package p breaks r ("" if it does not).
func (r rule) breaks(p string) string {
	for _, n := range r.not {
		if under(p, n) {
			return fmt.Sprintf("%s/ must not import", r.dir)
		}
	}
	if len(r.only) == 0 {
		return ""
	}
	for _, o := range r.only {
		if under(p, o) {
			return ""
		}
	}
	return fmt.Sprintf("is outside what %s/ may import (%s)", r.dir, strings.Join(r.only, ", "))
}

type fileImport struct{ file, pkg string }

// moduleImports lists the module packages imported by the .go files under
// dir (file paths relative to dir), sorted.
func moduleImports(dir string) ([]fileImport, error) {
	var out []fileImport
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if p == module || strings.HasPrefix(p, module+"/") {
				out = append(out, fileImport{filepath.ToSlash(rel), p})
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].file != out[j].file {
			return out[i].file < out[j].file
		}
		return out[i].pkg < out[j].pkg
	})
	return out, err
}
