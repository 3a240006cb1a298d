package loader

import (
	"context"
	"errors"
	"fmt"
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/internal/pause"
	"github.com/tesbo/tesbo/sdk"
)

// Kind is what a plugin is to the host.
type Kind int

const (
	KindUnknown     Kind = iota // not started yet, or failed before saying
	KindObjective               // an objective (sdk.ServeObjective(s), objective script)
	KindSuggester               // an acquisition proposing whole batches (sdk.ServeSuggester)
	KindAcquisition             // an acquisition function the host maximizes (sdk.ServeAcquisition, Score script)
)

func (k Kind) String() string {
	switch k {
	case KindObjective:
		return "objective"
	case KindSuggester:
		return "suggester"
	case KindAcquisition:
		return "acquisition"
	}
	return "unknown"
}

// Source is how a plugin is found and run.
type Source int

const (
	SourceExecutable Source = iota // an executable file speaking the handshake
	SourceGoDir                    // a Go main-package directory, built on first use
	SourceScript                   // a Yaegi script: a .go file or a directory of them
)

func (s Source) String() string {
	switch s {
	case SourceExecutable:
		return "executable"
	case SourceGoDir:
		return "go-source"
	case SourceScript:
		return "script"
	}
	return "unknown"
}

// Plugin describes one discovered plugin: one objective (a multi-objective
// binary yields one Plugin per objective, all with the same Path), one
// acquisition, or one entry of the directory that failed to load.
type Plugin struct {
	Name   string    // what --objective / --acq use: "cnn", "synthetic/branin", "ucb_script"
	Kind   Kind      // objective, suggester or acquisition; unknown when Err is set early
	Source Source    // executable, go-source or script
	Path   string    // the file or directory in the plugins dir
	Unit   string    // the plugin entry (file or directory name) serving it
	SHA256 string    // checksum to pin with --plugin-sha256 Unit=HEX (see Options.Checksums)
	Info   *sdk.Info // an objective's name and space (nil for acquisitions and on error)
	Err    error     // why it cannot be used (an *Error), nil when healthy
}

// Registry is the set of plugins found in a plugins directory. Plugins are
// started on first use and stay running (and are restarted after a crash)
// until Close. Safe for concurrent use.
type Registry struct {
	dir  string
	opts Options
	log  zerolog.Logger

	units []*unit // sorted by name

	// pinErr is why Options.Checksums cannot be applied (a name matching
	// no plugin, a malformed or conflicting value): nothing starts then.
	pinErr error

	mu     sync.Mutex
	closed bool
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
}

// unit is one entry of the plugins directory: one process type.
type unit struct {
	r      *Registry
	name   string
	path   string
	source Source
	kind   Kind  // known statically for scripts; after describe otherwise
	err    error // discovery error (nothing can be started)

	script *scriptInfo // scripts only

	mu        sync.Mutex
	described bool
	descErr   error
	objNames  []string             // remote names as served ("" for a single objective)
	infos     map[string]*sdk.Info // by remote name
	infoErrs  map[string]error
	sha       string
	pin       string // the pinned SHA-256 (lower-case hex), "" when not pinned
	pinKey    string // the Options.Checksums name that pinned it
	proc      *proc
	acq       *Acquisition
	sugg      *Suggester
	objective map[string]*Objective
}

// Discover scans dir (not recursively) for plugins: executables, Go
// main-package directories and Yaegi scripts. Entries whose name starts
// with "." or "_", "testdata", non-executable files other than .go files,
// and directories without Go files are ignored. Nothing is built or started
// yet; a broken entry is recorded and reported by List and never hides the
// others. The error is non-nil only when dir cannot be read.
func Discover(ctx context.Context, dir string, opts Options) (*Registry, error) {
	pause.Watch() // a call's limit passed while this process was paused is not a timeout
	r := &Registry{dir: dir, opts: opts, log: opts.logger().With().Str("component", "plugins").Logger()}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	entries, err := os.ReadDir(dir)
	if err != nil {
		r.cancel()
		return nil, fmt.Errorf("read plugins directory: %w", err)
	}
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			r.cancel()
			return nil, err
		}
		name := e.Name()
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" {
			continue
		}
		if u := r.scan(filepath.Join(dir, name)); u != nil {
			u.proc = newProc(u)
			r.units = append(r.units, u)
		}
	}
	sort.Slice(r.units, func(i, j int) bool {
		a, b := r.units[i], r.units[j]
		return a.name < b.name || a.name == b.name && a.path < b.path
	})
	seen := map[string]*unit{}
	for _, u := range r.units {
		if prev, ok := seen[u.name]; ok && u.err == nil {
			u.err = &Error{Plugin: u.name, Op: "discover", Cause: ErrDuplicate,
				Err: fmt.Errorf("%s and %s; rename one", prev.path, u.path)}
			continue
		}
		seen[u.name] = u
	}
	r.pinErr = resolvePins(opts.Checksums, seen, dir)
	return r, nil
}

// Dir returns the scanned directory.
func (r *Registry) Dir() string { return r.dir }

var extRE = regexp.MustCompile(`\.[A-Za-z0-9]+$`)

// scan classifies one directory entry; nil means "not a plugin, ignore".
func (r *Registry) scan(path string) *unit {
	base := filepath.Base(path)
	fi, err := os.Stat(path) // follows symlinks
	if err != nil {
		return &unit{r: r, name: base, path: path, err: &Error{Plugin: base, Op: "discover", Cause: ErrStart, Err: err}}
	}
	switch {
	case fi.IsDir():
		return r.scanDir(path)
	case !fi.Mode().IsRegular():
		// Reading a named pipe blocks, a device (a symlink to /dev/zero)
		// never ends: only regular files are plugins.
		name, cause, source := extRE.ReplaceAllString(base, ""), ErrStart, SourceExecutable
		if strings.HasSuffix(base, ".go") {
			name, cause, source = strings.TrimSuffix(base, ".go"), ErrScript, SourceScript
		}
		err := notRegular(path, fi.Mode())
		r.log.Warn().Str("path", path).Err(err).Msg("skipping plugins-directory entry")
		return &unit{r: r, name: name, path: path, source: source, err: &Error{Plugin: name, Op: "discover", Cause: cause, Err: err}}
	case strings.HasSuffix(base, ".go"):
		if strings.HasSuffix(base, "_test.go") {
			return nil
		}
		u := &unit{r: r, name: strings.TrimSuffix(base, ".go"), path: path, source: SourceScript}
		r.loadScriptInfo(u, []string{path})
		return u
	case fi.Mode().IsRegular() && fi.Mode()&0o111 != 0:
		return &unit{r: r, name: extRE.ReplaceAllString(base, ""), path: path, source: SourceExecutable}
	}
	r.log.Debug().Str("path", path).Msg("ignoring non-executable file in plugins directory")
	return nil
}

// scanDir classifies a directory by the Go package at its root: package
// main with func main is a Go source plugin (its sub-packages are its own
// business); any other package defining Info/Evaluate or Score is a script.
func (r *Registry) scanDir(path string) *unit {
	name := filepath.Base(path)
	bp, err := buildContext.ImportDir(path, 0)
	var noGo *build.NoGoError
	switch {
	case errors.As(err, &noGo):
		r.log.Debug().Str("path", path).Msg("ignoring directory without Go files in plugins directory")
		return nil
	case err != nil:
		return &unit{r: r, name: name, path: path, source: SourceGoDir,
			err: &Error{Plugin: name, Op: "discover", Cause: ErrScript, Err: fmt.Errorf("read Go package in %s: %w", path, err)}}
	}
	files := make([]string, len(bp.GoFiles))
	for i, f := range bp.GoFiles {
		files[i] = filepath.Join(path, f)
	}
	decls, err := topLevelFuncs(files)
	if err != nil {
		return &unit{r: r, name: name, path: path, source: SourceScript,
			err: &Error{Plugin: name, Op: "discover", Cause: ErrScript, Err: err}}
	}
	if bp.Name == "main" && decls["main"] {
		return &unit{r: r, name: name, path: path, source: SourceGoDir}
	}
	u := &unit{r: r, name: name, path: path, source: SourceScript}
	r.loadScriptInfo(u, files)
	return u
}

// List starts every plugin that is not running yet (building Go source
// plugins on first use), asks it what it serves, and returns one Plugin per
// objective or acquisition, plus one per entry that failed, sorted by name.
func (r *Registry) List(ctx context.Context) []Plugin {
	// Describe the plugins a few at a time: one that hangs until the start
	// timeout must not hold up every other.
	lists := make([][]Plugin, len(r.units))
	sem := make(chan struct{}, listParallel)
	var wg sync.WaitGroup
	for i, u := range r.units {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lists[i] = u.list(ctx)
		}()
	}
	wg.Wait()
	var out []Plugin
	for _, l := range lists {
		out = append(out, l...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	markShared(out)
	return out
}

// listParallel is how many plugins List describes at once.
const listParallel = 8

// markShared gives every healthy objective whose name several plugins
// serve an ErrDuplicate naming them: --objective would mean whichever
// Objective finds first. out is sorted by name.
func markShared(out []Plugin) {
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].Name == out[i].Name {
			j++
		}
		var paths []string
		for _, p := range out[i:j] {
			if p.Kind == KindObjective && p.Err == nil {
				paths = append(paths, p.Path)
			}
		}
		if len(paths) > 1 {
			for k := i; k < j; k++ {
				if out[k].Kind == KindObjective && out[k].Err == nil {
					out[k].Err, out[k].Info = &Error{Plugin: out[k].Name, Op: "list", Cause: ErrDuplicate,
						Err: fmt.Errorf("objective %q is served by %s; rename it in all but one", out[k].Name, strings.Join(paths, " and "))}, nil
				}
			}
		}
		i = j
	}
}

func (u *unit) list(ctx context.Context) []Plugin {
	base := Plugin{Name: u.name, Kind: u.kind, Source: u.source, Path: u.path, Unit: u.name}
	if u.err != nil {
		base.Err = u.err
		return []Plugin{base}
	}
	base.SHA256, _ = u.checksum()
	if err := u.describe(ctx); err != nil {
		base.Kind = u.kind
		base.Err = err
		return []Plugin{base}
	}
	base.Kind = u.kind
	if u.kind != KindObjective {
		return []Plugin{base}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []Plugin
	for _, rn := range u.objNames {
		p := base
		p.Name = u.publicName(rn)
		if e := u.infoErrs[rn]; e != nil {
			p.Err = e
		} else {
			p.Info = u.infos[rn]
		}
		out = append(out, p)
	}
	return out
}

// publicName maps the name an objective has inside its plugin to the name
// the host uses: a single unnamed objective takes the plugin's name.
func (u *unit) publicName(remote string) string {
	if remote == "" {
		return u.name
	}
	return remote
}

// describe starts the unit's process once and records what it serves and,
// for objectives, each objective's validated Info.
func (u *unit) describe(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return u.err
	}
	if u.described {
		return u.descErr
	}
	err := u.describeLocked(ctx)
	if ctx.Err() != nil && err != nil {
		return err // not cached: the caller gave up, the plugin may be fine
	}
	u.described, u.descErr = true, err
	return err
}

func (u *unit) describeLocked(ctx context.Context) error {
	p := u.proc
	s, err := p.get(ctx)
	if err != nil {
		return err
	}
	kind := kindFromProto(s.desc.GetKind())
	if u.kind != KindUnknown && kind != u.kind {
		return &Error{Plugin: u.name, Op: "describe", Cause: ErrWrongKind, Err: fmt.Errorf("expected %v, plugin says %v", u.kind, kind)}
	}
	u.kind = kind
	if kind == KindUnknown {
		return &Error{Plugin: u.name, Op: "describe", Cause: ErrStart, Err: errors.New("plugin serves no objective, suggester or acquisition")}
	}
	if kind != KindObjective {
		return nil
	}
	u.objNames = append([]string(nil), s.desc.GetObjectives()...)
	if len(u.objNames) == 0 {
		return &Error{Plugin: u.name, Op: "describe", Cause: ErrBadOutput, Err: errors.New("plugin serves an empty set of objectives")}
	}
	for i, rn := range u.objNames {
		if slices.Contains(u.objNames[:i], rn) {
			return &Error{Plugin: u.name, Op: "describe", Cause: ErrDuplicate, Err: fmt.Errorf("the plugin serves objective %q twice", u.publicName(rn))}
		}
	}
	u.infos = map[string]*sdk.Info{}
	u.infoErrs = map[string]error{}
	for _, rn := range u.objNames {
		info, caps, err := p.info(ctx, u.publicName(rn), rn)
		if err != nil {
			u.infoErrs[rn] = err
			continue
		}
		u.infos[rn] = &info
		if u.objective == nil {
			u.objective = map[string]*Objective{}
		}
		u.objective[rn] = &Objective{name: u.publicName(rn), remote: rn, u: u, p: p, info: info, caps: caps}
	}
	return nil
}

// Objective returns the objective called name, starting (and for Go
// sources building) its plugin if needed. A multi-objective plugin's
// objectives are named as the plugin serves them ("synthetic/branin"); a
// single-objective plugin's objective is named after the plugin.
func (r *Registry) Objective(ctx context.Context, name string) (*Objective, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var failed []string
	try := func(u *unit) (*Objective, bool, error) {
		if err := u.describe(ctx); err != nil {
			if u.name == name || strings.HasPrefix(name, u.name+"/") {
				return nil, true, err
			}
			failed = append(failed, u.name)
			return nil, false, nil
		}
		if u.kind != KindObjective {
			if u.name == name {
				return nil, true, &Error{Plugin: name, Op: "open", Cause: ErrWrongKind, Err: fmt.Errorf("it is an %v, not an objective", u.kind)}
			}
			return nil, false, nil
		}
		u.mu.Lock()
		defer u.mu.Unlock()
		for _, rn := range u.objNames {
			if u.publicName(rn) != name {
				continue
			}
			if e := u.infoErrs[rn]; e != nil {
				return nil, true, e
			}
			return u.objective[rn], true, nil
		}
		if u.name == name {
			names := make([]string, len(u.objNames))
			for i, rn := range u.objNames {
				names[i] = u.publicName(rn)
			}
			return nil, true, &Error{Plugin: name, Op: "open", Cause: ErrNotFound, Err: fmt.Errorf("the plugin serves several objectives; pick one of %s", strings.Join(names, ", "))}
		}
		return nil, false, nil
	}
	// The plugin named like the objective, or its prefix, first; the rest
	// only if needed (each costs a process start).
	ordered := r.candidates(name)
	for i, u := range ordered {
		if u.kind != KindUnknown && u.kind != KindObjective && u.name != name {
			continue
		}
		o, done, err := try(u)
		if !done {
			continue
		}
		if err == nil && u.name != name && !strings.HasPrefix(name, u.name+"/") {
			// No plugin is named like the objective: another of the rest
			// serving it would make the name ambiguous.
			for _, v := range ordered[i+1:] {
				if v.kind != KindUnknown && v.kind != KindObjective {
					continue
				}
				if other, ok, _ := try(v); ok && other != nil {
					return nil, &Error{Plugin: name, Op: "open", Cause: ErrDuplicate,
						Err: fmt.Errorf("objective %q is served by %s and %s; rename it in one, or name a plugin after it", name, u.path, v.path)}
				}
			}
		}
		return o, err
	}
	e := &Error{Plugin: name, Op: "open", Cause: ErrNotFound, Err: fmt.Errorf("no objective named %q in %s", name, r.dir)}
	if len(failed) > 0 {
		e.Err = fmt.Errorf("%w (plugins that failed to load: %s)", e.Err, strings.Join(failed, ", "))
	}
	return nil, e
}

// candidates orders units: exact name, then name prefix ("synthetic" for
// "synthetic/branin"), then the rest.
func (r *Registry) candidates(name string) []*unit {
	var first, second, rest []*unit
	for _, u := range r.units {
		switch {
		case u.name == name:
			first = append(first, u)
		case strings.HasPrefix(name, u.name+"/"):
			second = append(second, u)
		default:
			rest = append(rest, u)
		}
	}
	return append(append(first, second...), rest...)
}

func (r *Registry) unitNamed(name string) *unit {
	for _, u := range r.units {
		if u.name == name {
			return u
		}
	}
	return nil
}

// Acquisition returns the acquisition-function plugin called name (an
// sdk.ServeAcquisition binary or a Score script).
func (r *Registry) Acquisition(ctx context.Context, name string) (*Acquisition, error) {
	u, err := r.openKind(ctx, name, KindAcquisition)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.acq == nil {
		u.acq = newAcquisition(u)
	}
	return u.acq, nil
}

// Suggester returns the batch-proposing plugin called name.
func (r *Registry) Suggester(ctx context.Context, name string) (*Suggester, error) {
	u, err := r.openKind(ctx, name, KindSuggester)
	if err != nil {
		return nil, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.sugg == nil {
		u.sugg = &Suggester{u: u}
	}
	return u.sugg, nil
}

func (r *Registry) openKind(ctx context.Context, name string, want Kind) (*unit, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	u := r.unitNamed(name)
	if u == nil {
		return nil, &Error{Plugin: name, Op: "open", Cause: ErrNotFound, Err: fmt.Errorf("no plugin named %q in %s", name, r.dir)}
	}
	if err := u.describe(ctx); err != nil {
		return nil, err
	}
	if u.kind != want {
		return nil, &Error{Plugin: name, Op: "open", Cause: ErrWrongKind, Err: fmt.Errorf("it is an %v, not an %v", u.kind, want)}
	}
	return u, nil
}

// Names returns the names of the discovered entries (files and
// directories), without starting anything.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.units))
	for _, u := range r.units {
		out = append(out, u.name)
	}
	return out
}

func (r *Registry) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return &Error{Plugin: "*", Op: "open", Cause: ErrClosed}
	}
	return r.pinErr
}

// Close stops every plugin process this registry started and waits for
// them to exit. Handles obtained from the registry fail afterwards.
func (r *Registry) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	r.mu.Unlock()
	r.cancel() // interrupts builds and starts in progress
	var wg sync.WaitGroup
	for _, u := range r.units {
		wg.Add(1)
		go func() { defer wg.Done(); u.proc.close() }()
	}
	wg.Wait()
	return nil
}
