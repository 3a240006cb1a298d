// Command apiuse measures how much of the module's library API is used by
// nobody outside its package: an exported name that only its own package
// uses is surface a reader has to learn and a maintainer has to keep for no
// caller. It prints, per library package, how many exported names it
// declares and how many of them no other package refers to, then the share
// over the module, and exits 1 when the share is above -max percent (make
// lint runs it with the project's target).
//
//	go run ./internal/apiuse            # the table and the share
//	go run ./internal/apiuse -v         # and every unused name
//	go run ./internal/apiuse -max 15    # exit 1 above 15 %
//	go run ./internal/apiuse -unexport github.com/tesbo/tesbo/acq
//
// -unexport renames the unused names of the given packages to their
// unexported spelling, everywhere they occur (and the first word of their
// doc comment), when the new name conflicts with nothing; it says which it
// left and why. Check the result with go vet and the package's tests: it
// does not see names used only through reflection or by other interfaces
// than those described below.
//
// What counts:
//   - Library packages: every package of the module that is not a main
//     package, not under an internal/ directory and not under examples/
//     (examples are programs to copy, not APIs).
//   - Exported names: the package-level exported constants, variables,
//     functions and types, and the exported methods of exported types,
//     declared in non-generated, non-test files.
//   - Used: some other package of the module refers to the name — any
//     package, main or not, including other packages' tests and examples/.
//     The package's own tests, internal (package p) or external (package
//     p_test), are the package itself and do not count. A type also counts
//     as used when another package uses one of its fields or methods (a
//     caller of func New() *T that calls t.Run has used T), and a method
//     counts as used when its type implements an interface that has it
//     (the method cannot be unexported without breaking that interface;
//     interfaces declared in the module and in the packages it imports
//     count, and so do Unwrap, Is and As, which package errors calls).
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"io"
	"os"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	verbose := flag.Bool("v", false, "list every unused name")
	maxShare := flag.Float64("max", 100, "exit 1 when the unused share is above this percentage")
	skip := flag.String("skip-files", "", "with -unexport: comma-separated file paths (relative) it must not change")
	fix := flag.String("unexport", "", "comma-separated import paths: unexport their unused names (rewrites files)")
	flag.Parse()
	patterns := flag.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	rep, m, pkgs, err := measure(".", patterns...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiuse:", err)
		os.Exit(2)
	}
	if *fix != "" {
		set := map[string]bool{}
		for _, p := range strings.Split(*fix, ",") {
			set[p] = true
		}
		if err := m.unexport(pkgs, rep, set, strings.Split(*skip, ","), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "apiuse:", err)
			os.Exit(2)
		}
		return
	}
	rep.print(os.Stdout, *verbose)
	if share := rep.share(); share > *maxShare {
		fmt.Fprintf(os.Stderr, "apiuse: %.1f %% of exported names are used by no other package, above the %.0f %% allowed; unexport them (or use them)\n", share, *maxShare)
		os.Exit(1)
	}
}

// name is one exported name of a library package.
type name struct {
	pkg     string // import path
	id      string // "Name" or "Type.Method"
	used    bool
	ownTest bool         // the package's external tests (package p_test) use it
	obj     types.Object // the declared object (of the package's plain variant)
}

// report is the measurement: every exported name of every library package.
type report struct {
	names []*name
}

// share is the percentage of names no other package uses.
func (r *report) share() float64 {
	if len(r.names) == 0 {
		return 0
	}
	return 100 * float64(r.unused()) / float64(len(r.names))
}

func (r *report) unused() int {
	n := 0
	for _, nm := range r.names {
		if !nm.used {
			n++
		}
	}
	return n
}

// print writes one line per package (names, unused, and with verbose the
// unused names) and the total.
func (r *report) print(w io.Writer, verbose bool) {
	type count struct {
		total  int
		unused []string
	}
	per := map[string]*count{}
	var pkgs []string
	for _, nm := range r.names {
		c := per[nm.pkg]
		if c == nil {
			c = &count{}
			per[nm.pkg] = c
			pkgs = append(pkgs, nm.pkg)
		}
		c.total++
		if !nm.used {
			id := nm.id
			if nm.ownTest {
				id += " (its own external tests use it)"
			}
			c.unused = append(c.unused, id)
		}
	}
	sort.Strings(pkgs)
	for _, p := range pkgs {
		c := per[p]
		fmt.Fprintf(w, "%-50s %4d exported %4d unused\n", p, c.total, len(c.unused))
		if verbose {
			sort.Strings(c.unused)
			for _, id := range c.unused {
				fmt.Fprintf(w, "\t%s\n", id)
			}
		}
	}
	fmt.Fprintf(w, "total: %d of %d exported names (%.1f %%) are used by no other package\n", r.unused(), len(r.names), r.share())
}

// measure loads the packages matching patterns in dir, with their tests,
// and reports the exported names of the library packages among them.
func measure(dir string, patterns ...string) (*report, *measurer, []*packages.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
			packages.NeedTypesInfo | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Dir:   dir,
		Tests: true,
		Fset:  token.NewFileSet(),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("load packages: %w", err)
	}
	var loadErrs []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			loadErrs = append(loadErrs, e.Error())
		}
	})
	if len(loadErrs) > 0 {
		return nil, nil, nil, fmt.Errorf("the packages do not build:\n%s", strings.Join(loadErrs, "\n"))
	}
	m := &measurer{fset: cfg.Fset, byPos: map[token.Position]*name{}, owner: map[token.Position]*name{}}
	for _, p := range pkgs {
		if isLibrary(p) {
			m.declare(p)
		}
	}
	m.interfaces(pkgs)
	for _, p := range pkgs {
		m.uses(p)
	}
	return &report{names: m.names}, m, pkgs, nil
}

// isLibrary reports whether p is a library package: the plain (not test)
// variant of a non-main package outside internal/ and examples/.
func isLibrary(p *packages.Package) bool {
	if p.Name == "main" || p.ID != p.PkgPath || p.Module == nil {
		return false
	}
	rel := strings.TrimPrefix(p.PkgPath, p.Module.Path)
	parts := strings.Split(strings.Trim(rel, "/"), "/")
	for _, s := range parts {
		if s == "internal" {
			return false
		}
	}
	return parts[0] != "examples"
}

// measurer keys every object by its source position: the test variants
// of a package (p [p.test]) have their own type objects, but the same
// positions.
type measurer struct {
	fset  *token.FileSet
	names []*name
	byPos map[token.Position]*name // an exported name by its declaration
	owner map[token.Position]*name // a field or method by its type's name
	// methods: the declared exported methods with their receiver type,
	// checked against interfaces.
	methods []method
}

type method struct {
	recv *types.Named
	fn   *types.Func
	name *name
}

func (m *measurer) pos(o types.Object) token.Position { return m.fset.Position(o.Pos()) }

// declare records p's exported names, skipping generated files.
func (m *measurer) declare(p *packages.Package) {
	generated := map[string]bool{}
	for _, f := range p.Syntax {
		if ast.IsGenerated(f) {
			generated[m.fset.Position(f.Package).Filename] = true
		}
	}
	add := func(o types.Object, id string) *name {
		pos := m.pos(o)
		if generated[pos.Filename] {
			return nil
		}
		nm := &name{pkg: p.PkgPath, id: id, obj: o}
		m.names = append(m.names, nm)
		m.byPos[pos] = nm
		return nm
	}
	scope := p.Types.Scope()
	for _, n := range scope.Names() {
		o := scope.Lookup(n)
		if !o.Exported() {
			continue
		}
		nm := add(o, n)
		tn, ok := o.(*types.TypeName)
		if !ok || nm == nil || tn.IsAlias() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		if st, ok := named.Underlying().(*types.Struct); ok {
			for i := 0; i < st.NumFields(); i++ {
				m.owner[m.pos(st.Field(i))] = nm
			}
		}
		if it, ok := named.Underlying().(*types.Interface); ok {
			for i := 0; i < it.NumExplicitMethods(); i++ {
				m.owner[m.pos(it.ExplicitMethod(i))] = nm
			}
		}
		for i := 0; i < named.NumMethods(); i++ {
			fn := named.Method(i)
			m.owner[m.pos(fn)] = nm
			if fn.Exported() {
				if mn := add(fn, n+"."+fn.Name()); mn != nil {
					m.methods = append(m.methods, method{recv: named, fn: fn, name: mn})
				}
			}
		}
	}
}

// interfaces marks as used every declared method that its type needs to
// implement a non-empty interface of the loaded packages or their imports.
func (m *measurer) interfaces(pkgs []*packages.Package) {
	var ifaces []*types.Interface
	seen := map[*types.Package]bool{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.Types == nil || seen[p.Types] || p.ID != p.PkgPath {
			return
		}
		seen[p.Types] = true
		scope := p.Types.Scope()
		for _, n := range scope.Names() {
			if tn, ok := scope.Lookup(n).(*types.TypeName); ok {
				if it, ok := tn.Type().Underlying().(*types.Interface); ok && it.NumMethods() > 0 {
					ifaces = append(ifaces, it)
				}
			}
		}
	})
	// Interfaces without a name: in type assertions and signatures of the
	// module's code (obj.(interface{ Keys() []string })).
	for _, p := range pkgs {
		if p.TypesInfo == nil {
			continue
		}
		for _, tv := range p.TypesInfo.Types {
			if it, ok := tv.Type.Underlying().(*types.Interface); ok && it.NumMethods() > 0 {
				ifaces = append(ifaces, it)
			}
		}
	}
	ifaces = append(ifaces, types.Universe.Lookup("error").Type().Underlying().(*types.Interface))
	for _, md := range m.methods {
		if errorsMethods[md.fn.Name()] {
			md.name.used = true
			continue
		}
		ptr := types.NewPointer(md.recv)
		for _, it := range ifaces {
			if !hasMethod(it, md.fn.Name()) {
				continue
			}
			if types.Implements(md.recv, it) || types.Implements(ptr, it) || generic(md.recv, it) && namesImplement(ptr, it) {
				md.name.used = true
				break
			}
		}
	}
}

// uses marks the names that package p refers to, when p is not the
// names' own package (nor its tests).
func (m *measurer) uses(p *packages.Package) {
	if p.TypesInfo == nil {
		return
	}
	self := strings.TrimSuffix(p.PkgPath, "_test")
	xtest := self != p.PkgPath
	for _, o := range p.TypesInfo.Uses {
		if o.Pkg() == nil {
			continue
		}
		own := o.Pkg().Path() == self
		if own && !xtest {
			continue
		}
		pos := m.pos(o)
		for _, nm := range []*name{m.byPos[pos], m.owner[pos]} {
			switch {
			case nm == nil:
			case own:
				nm.ownTest = true
			default:
				nm.used = true
			}
		}
	}
}

// errorsMethods are the methods package errors calls through interfaces
// it does not name (errors.Is, errors.As, errors.Unwrap).
var errorsMethods = map[string]bool{"Unwrap": true, "Is": true, "As": true}

func hasMethod(it *types.Interface, name string) bool {
	for i := 0; i < it.NumMethods(); i++ {
		if it.Method(i).Name() == name {
			return true
		}
	}
	return false
}

// generic reports whether the type or the interface has type parameters
// (or mentions them), where types.Implements does not answer for every
// instantiation.
func generic(t *types.Named, it *types.Interface) bool {
	if t.TypeParams().Len() > 0 {
		return true
	}
	for i := 0; i < it.NumMethods(); i++ {
		if strings.ContainsAny(it.Method(i).Type().String(), "[") {
			return true
		}
	}
	return false
}

// namesImplement reports whether t has a method of every name of it.
func namesImplement(t types.Type, it *types.Interface) bool {
	ms := types.NewMethodSet(t)
	for i := 0; i < it.NumMethods(); i++ {
		m := it.Method(i)
		if ms.Lookup(m.Pkg(), m.Name()) == nil {
			return false
		}
	}
	return true
}
