package loader

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/traefik/yaegi/interp"
	"github.com/traefik/yaegi/stdlib"
	"github.com/traefik/yaegi/stdlib/syscall"
	"github.com/traefik/yaegi/stdlib/unrestricted"
	"github.com/traefik/yaegi/stdlib/unsafe"

	"github.com/tesbo/tesbo/host/loader/internal/symbols"
	"github.com/tesbo/tesbo/sdk"
)

// sdkImport is the import path scripts use for the SDK.
const sdkImport = "github.com/tesbo/tesbo/sdk"

// AllowedScriptImports is the standard library a script sees by default:
// packages that compute and do not reach the file system, the network,
// other processes or the runtime (no os, os/exec, net, unsafe, syscall,
// reflect, runtime, plugin). Options.Unrestricted lifts the restriction.
var AllowedScriptImports = []string{
	"bufio", "bytes", "cmp", "container/heap", "container/list", "container/ring",
	"context", "encoding/base64", "encoding/binary", "encoding/csv", "encoding/hex",
	"encoding/json", "errors", "fmt", "hash", "hash/crc32", "hash/fnv", "io",
	"log", "maps", "math", "math/big", "math/bits", "math/cmplx", "math/rand",
	"math/rand/v2", "path", "regexp", "slices", "sort", "strconv", "strings",
	"sync", "sync/atomic", "text/tabwriter", "time", "unicode", "unicode/utf16",
	"unicode/utf8",
}

// scriptInfo is what static analysis of a script found.
type scriptInfo struct {
	files []string
	pkg   string
}

// loadScriptInfo parses a script's files, checks its imports against the
// allowlist and classifies it, recording a load error on u if anything is
// wrong: nothing starts for a script that would fail anyway.
func (r *Registry) loadScriptInfo(u *unit, files []string) {
	kind, pkg, err := analyzeScript(files, r.opts.Unrestricted)
	if err != nil {
		cause := ErrScript
		if errors.Is(err, ErrRestricted) {
			cause = ErrRestricted
		}
		u.err = &Error{Plugin: u.name, Op: "load", Cause: cause, Err: err}
		return
	}
	u.kind = kind
	u.script = &scriptInfo{files: files, pkg: pkg}
}

// scriptSource is a script's files and their contents, read once: every
// interpreter of a script runner compiles these bytes, so a script edited
// on disk while a study runs changes nothing until the runner restarts.
type scriptSource struct {
	files []string
	srcs  [][]byte
}

// readScript reads the script at p (a .go file or a directory).
func readScript(p string) (*scriptSource, error) {
	files, err := scriptFiles(p)
	if err != nil {
		return nil, err
	}
	srcs, err := readSources(files)
	if err != nil {
		return nil, err
	}
	return &scriptSource{files: files, srcs: srcs}, nil
}

// analyzeScript returns the script's kind and package name.
func analyzeScript(files []string, unrestrictedOK bool) (Kind, string, error) {
	srcs, err := readSources(files)
	if err != nil {
		return KindUnknown, "", err
	}
	return analyzeSource(&scriptSource{files: files, srcs: srcs}, unrestrictedOK)
}

// analyzeSource is analyzeScript on sources read.
func analyzeSource(src *scriptSource, unrestrictedOK bool) (Kind, string, error) {
	pkg, funcs, err := parseSource(src, unrestrictedOK)
	if err != nil {
		return KindUnknown, "", err
	}
	kind, err := scriptKind(pkg, funcs)
	if err != nil {
		return KindUnknown, "", err
	}
	return kind, pkg, nil
}

// parseSource parses a script's sources, checks their imports against the
// allowlist and returns the package name and the functions (not methods)
// the script declares.
func parseSource(src *scriptSource, unrestrictedOK bool) (string, map[string]bool, error) {
	files, srcs := src.files, src.srcs
	if len(files) == 0 {
		return "", nil, errors.New("no Go files")
	}
	fset := token.NewFileSet()
	pkg := ""
	funcs := map[string]bool{}
	for i, f := range files {
		af, err := parser.ParseFile(fset, f, srcs[i], parser.SkipObjectResolution)
		if err != nil {
			return "", nil, fmt.Errorf("parse: %w", err)
		}
		if pkg == "" {
			pkg = af.Name.Name
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if err := checkImport(p, unrestrictedOK); err != nil {
				return "", nil, fmt.Errorf("%s: %w", fset.Position(im.Pos()), err)
			}
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				funcs[fd.Name.Name] = true
			}
		}
	}
	return pkg, funcs, nil
}

// scriptKind classifies a script of package pkg by the functions it
// declares.
func scriptKind(pkg string, funcs map[string]bool) (Kind, error) {
	switch {
	case funcs["Score"] && (funcs["Info"] || funcs["Evaluate"] || funcs["EvaluateOutputs"]):
		return KindUnknown, errors.New("defines both Score (acquisition) and Info/Evaluate (objective); a script is one or the other")
	case funcs["Score"]:
		return KindAcquisition, nil
	case funcs["Evaluate"] && funcs["EvaluateOutputs"]:
		return KindUnknown, errors.New("defines both Evaluate (one output) and EvaluateOutputs (several); an objective script defines one of them")
	case funcs["Info"] && (funcs["Evaluate"] || funcs["EvaluateOutputs"]):
		return KindObjective, nil
	case funcs["Info"] || funcs["Evaluate"] || funcs["EvaluateOutputs"]:
		return KindUnknown, errors.New("an objective script must define both func Info() sdk.Info and func Evaluate(ctx context.Context, x []float64) (float64, error) (or, for several outputs, func EvaluateOutputs(ctx context.Context, x []float64) ([]float64, error))")
	}
	return KindUnknown, fmt.Errorf("package %s is not a plugin: a script defines Info and Evaluate (objective) or Score (acquisition), a Go plugin directory is package main with func main", pkg)
}

var allowedImports = func() map[string]bool {
	m := map[string]bool{sdkImport: true}
	for _, p := range AllowedScriptImports {
		m[p] = true
	}
	return m
}()

// checkImport says why a script may not import p.
func checkImport(p string, unrestrictedOK bool) error {
	if allowedImports[p] {
		return nil
	}
	if !isStdlib(p) {
		return fmt.Errorf("%w: %q: scripts can import only the standard library and %s (put other code in a Go plugin directory instead)", ErrScript, p, sdkImport)
	}
	if unrestrictedOK {
		return nil
	}
	return fmt.Errorf("%w: %q is not in the restricted standard library scripts get by default (no process, file, network, unsafe or runtime access); pass --unrestricted (loader.Options.Unrestricted) to allow it", ErrRestricted, p)
}

// isStdlib reports whether p is a standard-library path (Yaegi knows it).
func isStdlib(p string) bool {
	if p == "unsafe" || p == "syscall" {
		return true
	}
	key := p + "/" + path.Base(p)
	if strings.HasSuffix(p, "/v2") { // math/rand/v2 is keyed "math/rand/v2/rand"
		key = p + "/" + path.Base(strings.TrimSuffix(p, "/v2"))
	}
	_, std := stdlib.Symbols[key]
	_, unr := unrestricted.Symbols[key] // os/exec lives only here
	return std || unr
}

// topLevelFuncs lists the functions (not methods) declared in files.
func topLevelFuncs(files []string) (map[string]bool, error) {
	srcs, err := readSources(files)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string]bool{}
	for i, f := range files {
		af, err := parser.ParseFile(fset, f, srcs[i], parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse: %w", err)
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				out[fd.Name.Name] = true
			}
		}
	}
	return out, nil
}

// scriptFiles lists the Go files of a script (file or directory).
func scriptFiles(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	bp, err := buildContext.ImportDir(p, 0)
	if err != nil {
		return nil, err
	}
	files := make([]string, len(bp.GoFiles))
	for i, f := range bp.GoFiles {
		files[i] = filepath.Join(p, f)
	}
	sort.Strings(files)
	return files, nil
}

// Script is a compiled Yaegi script: the functions it defines, evaluated
// once and reused for every call (Yaegi grows its memory on every Eval).
// Calls run in the calling process with no protection; the loader runs
// scripts in a child process (see package doc) and only the script runner
// and benchmarks use Script directly.
type Script struct {
	Kind     Kind
	Info     func() sdk.Info
	Evaluate func(context.Context, []float64) (float64, error)
	// EvaluateOutputs is set instead of Evaluate for a script of several
	// outputs (sdk.MultiOutput).
	EvaluateOutputs func(context.Context, []float64) ([]float64, error)
	Score           func(sdk.Posterior, [][]float64) float64
}

// CompileScript loads the script at path (a .go file or a directory) with
// the restricted standard library unless unrestricted is set.
func CompileScript(p string, unrestrictedOK bool) (*Script, error) {
	src, err := readScript(p)
	if err != nil {
		return nil, err
	}
	return compileSource(src, unrestrictedOK)
}

// compileSource is CompileScript on sources read.
func compileSource(src *scriptSource, unrestrictedOK bool) (*Script, error) {
	pkg, funcs, err := parseSource(src, unrestrictedOK)
	if err != nil {
		return nil, err
	}
	kind, err := scriptKind(pkg, funcs)
	if err != nil {
		return nil, err
	}
	files, srcs := src.files, src.srcs
	fsys := fstest.MapFS{}
	for i, f := range files {
		fsys["src/tesboscript/"+filepath.Base(f)] = &fstest.MapFile{Data: srcs[i], Mode: 0o444}
	}
	// What a script prints (fmt.Print*, its log package) goes to the
	// process's own stderr, which the host logs at info level and keeps
	// the tail of for a crash's error. The process's stdout is the
	// handshake's, and go-plugin drops what follows it: a script that
	// printed while loading broke the handshake, and later prints vanished.
	opts := interp.Options{GoPath: ".", SourcecodeFilesystem: fsys, Unrestricted: unrestrictedOK,
		Stdout: processStderr, Stderr: processStderr}
	if !unrestrictedOK {
		// Yaegi's fmt.Scan* read the interpreter's stdin, which defaults to
		// the process's: the host's own (go-plugin hands it to plugins). A
		// restricted script reads nothing there.
		opts.Stdin = strings.NewReader("")
	}
	i := interp.New(opts)
	// Use merges symbol tables package by package, so the unrestricted
	// additions to os and log extend the standard ones.
	for _, exp := range append(scriptSymbols(unrestrictedOK), symbols.Symbols) {
		if err := i.Use(exp); err != nil {
			return nil, err
		}
	}
	if err := importScript(i); err != nil {
		return nil, err
	}
	s := &Script{Kind: kind}
	get := func(name string, dst any) error {
		v, err := i.Eval("script." + name)
		if err != nil {
			return fmt.Errorf("look up %s: %w", name, err)
		}
		want := reflect.TypeOf(dst).Elem()
		if !v.IsValid() || v.Kind() != reflect.Func || v.Type() != want {
			return fmt.Errorf("%s has type %v, want %v", name, v.Type(), want)
		}
		// v.Interface() is a real Go function wrapping the interpreted one.
		reflect.ValueOf(dst).Elem().Set(reflect.ValueOf(v.Interface()))
		return nil
	}
	switch kind {
	case KindObjective:
		if err := get("Info", &s.Info); err != nil {
			return nil, err
		}
		if funcs["EvaluateOutputs"] {
			if err := get("EvaluateOutputs", &s.EvaluateOutputs); err != nil {
				return nil, err
			}
		} else if err := get("Evaluate", &s.Evaluate); err != nil {
			return nil, err
		}
	case KindAcquisition:
		if err := get("Score", &s.Score); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// processStderr is the process's own stderr: go-plugin replaces
// os.Stderr once the runner serves by a pipe it streams to the host, which
// loses what a dying process wrote last, while the host reads the
// process's own stderr to the end.
var processStderr = os.Stderr

// scriptSymbols is the standard library a script sees.
func scriptSymbols(unrestrictedOK bool) []interp.Exports {
	if unrestrictedOK {
		return []interp.Exports{stdlib.Symbols, unrestricted.Symbols, syscall.Symbols, unsafe.Symbols}
	}
	out := interp.Exports{}
	for k, v := range stdlib.Symbols {
		if allowedImports[path.Dir(k)] { // "math/rand/v2/rand" → "math/rand/v2"
			out[k] = v
		}
	}
	return []interp.Exports{out}
}

// importScript compiles the script's package into i. Yaegi panics on
// some type errors instead of returning them (calling a constant such as
// sdk.Float: "reflect: NumIn of non-func type"); the panic becomes a
// one-line compile error rather than a stack trace in the host's error.
func importScript(i *interp.Interpreter) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("compile: the interpreter failed on the script (%v): the script probably does not type-check at that position", p)
		}
	}()
	if _, err := i.Eval(`import script "tesboscript"`); err != nil {
		return fmt.Errorf("compile: %w", err)
	}
	return nil
}
