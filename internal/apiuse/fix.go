package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"io"
	"os"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/tools/go/packages"
)

// unexport renames, in the packages whose import path is in pkgs, every
// exported name that no other package uses (and that the package's own
// external tests do not use) to its unexported form, when that causes no
// conflict; it writes the files and says on w what it renamed and what it
// left, and why.
//
// A name none of whose edits may land in a file ending in one of skip is
// left too.
func (m *measurer) unexport(all []*packages.Package, rep *report, pkgs map[string]bool, skip []string, w io.Writer) error {
	type edit struct {
		off      int
		old, new string
	}
	edits := map[string][]edit{} // by file name
	seen := map[token.Position]bool{}
	for _, nm := range rep.names {
		if nm.used || !pkgs[nm.pkg] {
			continue
		}
		if nm.ownTest {
			fmt.Fprintf(w, "left %s.%s: its package's external tests use it\n", nm.pkg, nm.id)
			continue
		}
		old := nm.obj.Name()
		nw := lowerName(old)
		if why := m.conflict(all, nm, nw); why != "" {
			fmt.Fprintf(w, "left %s.%s: %s\n", nm.pkg, nm.id, why)
			continue
		}
		decl := m.pos(nm.obj)
		var mine []edit
		var files []string
		for _, p := range all {
			if p.TypesInfo == nil {
				continue
			}
			for _, idents := range []map[*ast.Ident]types.Object{p.TypesInfo.Defs, p.TypesInfo.Uses} {
				for id, o := range idents {
					if o == nil || m.pos(o) != decl {
						continue
					}
					pos := m.fset.Position(id.Pos())
					if seen[pos] {
						continue
					}
					seen[pos] = true
					mine = append(mine, edit{pos.Offset, old, nw})
					files = append(files, pos.Filename)
				}
			}
		}
		// The doc comment's first word is the name.
		if doc := m.docStart(all, nm.obj); doc.IsValid() {
			pos := m.fset.Position(doc)
			mine = append(mine, edit{pos.Offset, old, nw})
			files = append(files, pos.Filename)
		}
		if f := skipped(files, skip); f != "" {
			fmt.Fprintf(w, "left %s.%s: it would change %s\n", nm.pkg, nm.id, f)
			continue
		}
		for i, e := range mine {
			edits[files[i]] = append(edits[files[i]], e)
		}
		fmt.Fprintf(w, "unexported %s.%s → %s\n", nm.pkg, nm.id, nw)
	}
	files := make([]string, 0, len(edits))
	for f := range edits {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		es := edits[f]
		sort.Slice(es, func(i, j int) bool { return es[i].off > es[j].off })
		for _, e := range es {
			if !bytes.HasPrefix(src[e.off:], []byte(e.old)) {
				return fmt.Errorf("%s:%d: want %s", f, e.off, e.old)
			}
			src = append(src[:e.off], append([]byte(e.new), src[e.off+len(e.old):]...)...)
		}
		if err := os.WriteFile(f, src, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// docStart returns the position of the doc comment of o's declaration
// when the comment starts with o's name.
func (m *measurer) docStart(all []*packages.Package, o types.Object) token.Pos {
	decl := m.pos(o)
	for _, p := range all {
		if p.ID != p.PkgPath || p.PkgPath != o.Pkg().Path() {
			continue
		}
		for _, f := range p.Syntax {
			if m.fset.Position(f.Package).Filename != decl.Filename {
				continue
			}
			var doc *ast.CommentGroup
			ast.Inspect(f, func(n ast.Node) bool {
				switch d := n.(type) {
				case *ast.FuncDecl:
					if m.fset.Position(d.Name.Pos()) == decl {
						doc = d.Doc
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						var ids []*ast.Ident
						var sdoc *ast.CommentGroup
						switch s := s.(type) {
						case *ast.TypeSpec:
							ids, sdoc = []*ast.Ident{s.Name}, s.Doc
						case *ast.ValueSpec:
							ids, sdoc = s.Names, s.Doc
						}
						for _, id := range ids {
							if m.fset.Position(id.Pos()) == decl {
								doc = sdoc
								if doc == nil && len(d.Specs) == 1 {
									doc = d.Doc
								}
							}
						}
					}
				}
				return doc == nil
			})
			if doc == nil {
				return token.NoPos
			}
			c := doc.List[0]
			text := strings.TrimPrefix(c.Text, "//")
			lead := len(text) - len(strings.TrimLeft(text, " "))
			if strings.HasPrefix(text[lead:], o.Name()+" ") || strings.HasPrefix(text[lead:], o.Name()+"'") {
				return c.Slash + token.Pos(2+lead)
			}
			return token.NoPos
		}
	}
	return token.NoPos
}

// conflict says why o cannot be renamed to nw, or "".
func (m *measurer) conflict(all []*packages.Package, nm *name, nw string) string {
	o := nm.obj
	decl := m.pos(o)
	fn, isMethod := o.(*types.Func)
	if isMethod && fn.Signature().Recv() == nil {
		isMethod = false
	}
	if token.IsKeyword(nw) || !isMethod && types.Universe.Lookup(nw) != nil {
		return nw + " is a keyword or predeclared"
	}
	if !token.IsIdentifier(nw) || nw == "init" || nw == "main" || nw == "_" {
		return nw + " is not a usable name"
	}
	for _, p := range all {
		if p.Types == nil || strings.TrimSuffix(p.PkgPath, "_test") != o.Pkg().Path() {
			continue
		}
		if isMethod {
			recv := fn.Signature().Recv().Type()
			if ptr, ok := recv.(*types.Pointer); ok {
				recv = ptr.Elem()
			}
			named, ok := recv.(*types.Named)
			if !ok {
				return "receiver is not a named type"
			}
			// Look the receiver up in this variant by its position.
			if q := p.Types.Scope().Lookup(named.Obj().Name()); q != nil && m.pos(q) == m.pos(named.Obj()) {
				if f, _, _ := types.LookupFieldOrMethod(types.NewPointer(q.Type()), true, p.Types, nw); f != nil {
					return fmt.Sprintf("%s already has a field or method %s", named.Obj().Name(), nw)
				}
			}
			continue
		}
		if p.PkgPath == o.Pkg().Path() {
			if q := p.Types.Scope().Lookup(nw); q != nil {
				return fmt.Sprintf("the package already declares %s", nw)
			}
			for _, f := range p.Syntax {
				for _, imp := range f.Imports {
					if imp.Name != nil && imp.Name.Name == nw || imp.Name == nil && lastElem(imp.Path.Value) == nw {
						return fmt.Sprintf("%s imports a package named %s", m.fset.Position(f.Package).Filename, nw)
					}
				}
			}
		}
		for id, u := range p.TypesInfo.Uses {
			if m.pos(u) != decl {
				continue
			}
			s := p.Types.Scope().Innermost(id.Pos())
			if s == nil {
				continue
			}
			if _, q := s.LookupParent(nw, id.Pos()); q != nil {
				return fmt.Sprintf("%s at %s would mean another %s", o.Name(), m.fset.Position(id.Pos()), nw)
			}
		}
	}
	return ""
}

func skipped(files, skip []string) string {
	for _, f := range files {
		for _, s := range skip {
			if s != "" && strings.HasSuffix(f, "/"+s) {
				return f
			}
		}
	}
	return ""
}

func lastElem(quoted string) string {
	s := strings.Trim(quoted, `"`)
	return s[strings.LastIndex(s, "/")+1:]
}

// lowerName is the unexported form of an exported name: its leading
// capitals lowered, keeping the last one of a run that starts a word
// (XStar → xStar, HTTPServer → httpServer, ID → id, EP → ep).
func lowerName(s string) string {
	r := []rune(s)
	n := 0
	for n < len(r) && unicode.IsUpper(r[n]) {
		n++
	}
	if n > 1 && n < len(r) && unicode.IsLower(r[n]) {
		n--
	}
	for i := 0; i < n; i++ {
		r[i] = unicode.ToLower(r[i])
	}
	return string(r)
}
