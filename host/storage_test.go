package host

import (
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// The host's exported API names no type of package store: an exported
// declaration (function, method, type, field, typed var or const) whose
// type mentions store.X fails.
func TestHostExportsNoStoreTypes(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	mentions := func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == "store" {
					found = true
				}
			}
			return !found
		})
		return found
	}
	report := func(n ast.Node, what string) {
		t.Errorf("%s: exported %s names a store type", fset.Position(n.Pos()), what)
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil {
					recv := d.Recv.List[0].Type
					if star, ok := recv.(*ast.StarExpr); ok {
						recv = star.X
					}
					if id, ok := recv.(*ast.Ident); ok && !id.IsExported() {
						continue
					}
				}
				if mentions(d.Type) {
					report(d, "function "+d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if sp.Name.IsExported() && exportedMentions(sp.Type, mentions) {
							report(sp, "type "+sp.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() && sp.Type != nil && mentions(sp.Type) {
								report(sp, n.Name)
							}
						}
					}
				}
			}
		}
	}
}

// exportedMentions is mentions for a type declaration, looking only at
// the exported fields (and embedded types) of a struct and the methods
// of an interface.
func exportedMentions(typ ast.Expr, mentions func(ast.Node) bool) bool {
	st, ok := typ.(*ast.StructType)
	if !ok {
		return mentions(typ)
	}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			if mentions(f.Type) {
				return true
			}
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() && mentions(f.Type) {
				return true
			}
		}
	}
	return false
}

// A study in MemoryStorage behaves as in a SQLite file: the same trials
// bit for bit, reopened and continued after Close, and a second holder
// refused with this package's *LeaseHeldError.
func TestMemoryStorage(t *testing.T) {
	ctx := context.Background()
	obj := funcObjective{info: unitInfo(2), f: func(_ context.Context, x []float64) (float64, error) {
		return -(x[0]-0.3)*(x[0]-0.3) - (x[1]-0.6)*(x[1]-0.6), nil
	}}
	run := func(st *Storage) []Trial {
		o := Options{DB: st, Name: "s", Acquisition: "ei", Init: 3, Iters: 1, Batch: 2, Seed: 5}
		if _, err := Optimize(ctx, obj, o); err != nil {
			t.Fatal(err)
		}
		// Continue it: a reopened study runs two more iterations.
		s, err := OpenStudy(ctx, st, "s", Options{Iters: 3})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := OpenStudy(ctx, st, "s", Options{}); AsLeaseHeld(err) == nil {
			t.Fatalf("second holder: %v, want a *LeaseHeldError", err)
		} else if held := (*LeaseHeldError)(nil); !errors.As(err, &held) || held.Study != "s" {
			t.Fatalf("errors.As(%v, *host.LeaseHeldError) = %+v", err, held)
		}
		if _, err := s.Run(ctx, obj); err != nil {
			t.Fatal(err)
		}
		ts, err := st.Trials(ctx, "s")
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	file, err := OpenStorage(ctx, filepath.Join(t.TempDir(), "s.db"), StorageOptions{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	mem := MemoryStorage()
	a, b := run(file), run(mem)
	if len(a) != 3+3*2 {
		t.Fatalf("%d trials, want 9", len(a))
	}
	sameTrials(t, a, b)
	for i := range a {
		if a[i].Status != Complete || b[i].Status != Complete {
			t.Fatalf("trial %d: %s / %s", i, a[i].Status, b[i].Status)
		}
	}
	if _, err := mem.Trials(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("trials of a missing study: %v, want ErrNotFound", err)
	}
	if mem.Path() != ":memory:" {
		t.Fatal(mem.Path())
	}
}
