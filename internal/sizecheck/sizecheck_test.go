package sizecheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

const (
	// MaxFileLines bounds a hand-written Go file, tests included.
	MaxFileLines = 600
	// MaxFuncLines bounds a function or method, from its func keyword to
	// its closing brace.
	MaxFuncLines = 100
)

// allowed lists the violations tolerated for now, keyed as violation
// prints them ("path" for a file, "path:Func" or "path:Type.Method" for a
// function), with why. Delete an entry once its code is split; the test
// fails on an entry that no longer matches anything, so the list cannot go
// stale.
var allowed = map[string]string{}

// violation is a file or function over its bound.
type violation struct {
	key   string // "path" or "path:Func" (receiver-qualified: "path:T.M")
	lines int
	limit int
}

func (v violation) String() string {
	return fmt.Sprintf("%s: %d lines (limit %d)", v.key, v.lines, v.limit)
}

// TestSizes fails listing every file and function over its bound that is
// not in allowed, and every allowed entry that is no longer over.
func TestSizes(t *testing.T) {
	root := testenv.RepoRoot(t)
	found, err := scan(root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var bad []string
	for _, v := range found {
		if _, ok := allowed[v.key]; ok {
			seen[v.key] = true
			t.Logf("allowed: %v (%s)", v, allowed[v.key])
			continue
		}
		bad = append(bad, v.String())
	}
	for key := range allowed {
		if !seen[key] {
			bad = append(bad, fmt.Sprintf("%s: allowed but within the limits now; delete its entry in allowed", key))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("%d size violations; split them by idea (files named for their content), or for generated code add the \"Code generated … DO NOT EDIT.\" header:\n\t%s",
			len(bad), strings.Join(bad, "\n\t"))
	}
}

// skipDir reports directories that hold no code of the repository's own.
func skipDir(name string) bool {
	return name == "node_modules" || name == "vendor" || (strings.HasPrefix(name, ".") && name != ".")
}

// scan parses every hand-written .go file under root and returns the
// violations, sorted by key.
func scan(root string) ([]violation, error) {
	var out []violation
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, ".pb.go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("sizecheck: %w", err)
		}
		if ast.IsGenerated(f) {
			return nil
		}
		out = append(out, fileViolations(fset, f, filepath.ToSlash(rel))...)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, err
}

// fileViolations measures one parsed file and its functions.
func fileViolations(fset *token.FileSet, f *ast.File, rel string) []violation {
	var out []violation
	if n := fset.File(f.Pos()).LineCount(); n > MaxFileLines {
		out = append(out, violation{key: rel, lines: n, limit: MaxFileLines})
	}
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
		if n > MaxFuncLines {
			out = append(out, violation{key: rel + ":" + funcName(fn), lines: n, limit: MaxFuncLines})
		}
	}
	return out
}

// funcName is fn's name, qualified by its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	t := fn.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		}
		break
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
