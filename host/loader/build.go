package loader

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// build returns the binary of a Go source plugin, building it with the
// user's go toolchain into the cache when no binary for the current hash of
// its sources exists. The build runs in the plugin's directory, so the
// enclosing go.mod (if any) provides the module context: a plugin inside
// the tesbo module resolves github.com/tesbo/tesbo/... from the checkout.
func (r *Registry) build(ctx context.Context, u *unit) (string, error) {
	fail := func(cause error, err error) (string, error) {
		return "", &Error{Plugin: u.name, Op: "build", Cause: cause, Err: err}
	}
	goBin, err := exec.LookPath(r.opts.goCmd())
	if err != nil {
		return fail(ErrNoGo, fmt.Errorf("%s is a Go source plugin and building it needs the go command: %v; install Go (https://go.dev/dl) or build the plugin yourself and put the binary in the plugins directory", u.path, err))
	}
	srcDir := u.path
	if d, err := filepath.EvalSymlinks(u.path); err == nil {
		srcDir = d // a symlinked plugin builds in its real module
	}
	if d, err := filepath.Abs(srcDir); err == nil {
		srcDir = d // one cache key however the plugins directory was spelled (run's ./plugins, resume's stored absolute path)
	}
	if findGoMod(srcDir) == "" {
		return fail(ErrBuild, fmt.Errorf("%s is not inside a Go module; %s", u.path, moduleHint(u.name)))
	}
	key, err := r.buildKey(ctx, goBin, u, srcDir)
	if err != nil {
		return fail(ErrBuild, err)
	}
	dir := filepath.Join(r.opts.cacheDir(), sanitize(u.name)+"-"+key[:24])
	bin := filepath.Join(dir, sanitize(u.name))
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() {
		now := time.Now()
		os.Chtimes(dir, now, now) // recently used: kept by pruneBuilds
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fail(ErrBuild, fmt.Errorf("create build cache: %w", err))
	}
	tmp := bin + ".tmp-" + randHex(6)
	defer os.Remove(tmp)
	start := time.Now()
	r.log.Info().Str("plugin", u.name).Str("dir", u.path).Msg("building Go plugin (first use of these sources)")
	cmd := exec.CommandContext(ctx, goBin, "build", "-buildvcs=false", "-o", tmp, ".")
	cmd.Dir = srcDir
	cmd.Env = os.Environ()
	setProcAttr(cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ctx.Err() != nil {
			return fail(ErrBuild, ctx.Err())
		}
		return fail(ErrBuild, fmt.Errorf("go build in %s failed (%v):\n%s", srcDir, err, trimOutput(out)))
	}
	if err := os.Rename(tmp, bin); err != nil {
		return fail(ErrBuild, fmt.Errorf("store built plugin: %w", err))
	}
	r.log.Info().Str("plugin", u.name).Int64("took_ms", time.Since(start).Milliseconds()).Str("binary", bin).Msg("built Go plugin")
	if n := pruneBuilds(r.opts.cacheDir(), sanitize(u.name), keptBuilds); n > 0 {
		r.log.Debug().Str("plugin", u.name).Int("removed", n).Msg("removed older builds from the cache")
	}
	return bin, nil
}

// keptBuilds is how many builds of one plugin the cache keeps: every
// change to a plugin's sources (for a plugin inside a checkout, to any
// package it uses) adds a binary of tens of MB, and the cache held 713 MB
// after a few weeks' edits. A few are kept, not one, so that checkouts
// used in turn do not rebuild each time.
const keptBuilds = 3

// pruneBuilds removes from cacheDir the builds of plugin name (entries
// name-<24 hex digits>) beyond the keep most recently used (by the
// entry's modification time, which build touches on each use), and
// returns how many it removed. A running process keeps its binary open,
// so removing it does not disturb the process.
func pruneBuilds(cacheDir, name string, keep int) int {
	ents, err := os.ReadDir(cacheDir)
	if err != nil {
		return 0
	}
	type build struct {
		path string
		used time.Time
	}
	var builds []build
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), name+"-")
		if !ok || !e.IsDir() || !isHex(rest, 24) {
			continue
		}
		if fi, err := e.Info(); err == nil {
			builds = append(builds, build{filepath.Join(cacheDir, e.Name()), fi.ModTime()})
		}
	}
	sort.Slice(builds, func(i, j int) bool { return builds[i].used.After(builds[j].used) })
	n := 0
	for _, b := range builds[min(keep, len(builds)):] {
		if os.RemoveAll(b.path) == nil {
			n++
		}
	}
	return n
}

// isHex reports whether s is n lowercase hexadecimal digits.
func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// moduleHint says how to make a plugin directory its own module: `go get`
// fetches a published tesbo; a local checkout (the only route while tesbo
// is not published) is wired in with a replace directive, after which go
// get resolves the sdk from the checkout, and copying the checkout's go.sum
// lets that work offline from the module cache.
func moduleHint(name string) string {
	return fmt.Sprintf("in it, run `go mod init example.com/%s`, then for a tesbo checkout at DIR "+
		"`go mod edit -replace github.com/tesbo/tesbo=DIR && cp DIR/go.sum . && go get github.com/tesbo/tesbo/sdk`, "+
		"or for a published tesbo `go get github.com/tesbo/tesbo/sdk@latest`", name)
}

// buildKey hashes what determines the binary: the toolchain and target,
// the plugin's directory tree, the source files of every package of the
// main module (or workspace) it depends on, and go.mod/go.sum.
func (r *Registry) buildKey(ctx context.Context, goBin string, u *unit, dir string) (string, error) {
	h := sha256.New()
	envOut, err := goOutput(ctx, goBin, dir, "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT", "GOAMD64", "GOWORK")
	if err != nil {
		return "", err
	}
	h.Write(envOut)
	files, err := treeFiles(dir)
	if err != nil {
		return "", err
	}
	// Dependencies whose sources can change under the same go.mod: packages
	// of the main module outside the plugin's own tree (e.g. the sdk when
	// the plugin lives in the tesbo checkout) and of modules replaced by a
	// local directory (a plugin module with `replace
	// github.com/tesbo/tesbo => ../tesbo`). `go list -e` also works when a
	// package does not compile; go build reports that.
	deps, err := goOutput(ctx, goBin, dir, "list", "-e", "-deps", "-f", localPackagesTemplate, ".")
	if err == nil {
		for _, d := range strings.Fields(string(deps)) {
			if within(d, dir) {
				continue
			}
			ents, err := os.ReadDir(d)
			if err != nil {
				continue
			}
			for _, e := range ents {
				if e.Type().IsRegular() && !strings.HasSuffix(e.Name(), "_test.go") {
					files = append(files, filepath.Join(d, e.Name()))
				}
			}
		}
	}
	if mod := findGoMod(dir); mod != "" {
		files = append(files, mod)
		if sum := filepath.Join(filepath.Dir(mod), "go.sum"); fileExists(sum) {
			files = append(files, sum)
		}
	}
	sort.Strings(files)
	for _, f := range files {
		if err := hashFile(h, "/", f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// localPackagesTemplate prints the directory of a package of the main
// module or of a module replaced by a directory (a replacement without a
// version), nothing for other packages.
const localPackagesTemplate = "{{with .Module}}{{if or .Main (and .Replace (not .Replace.Version))}}{{$.Dir}}{{end}}{{end}}"

func goOutput(ctx context.Context, goBin, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	setProcAttr(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// findGoMod returns the go.mod governing dir, or "".
func findGoMod(dir string) string {
	d, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	for {
		if p := filepath.Join(d, "go.mod"); fileExists(p) {
			return p
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

func within(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

var unsafeRE = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func sanitize(s string) string { return unsafeRE.ReplaceAllString(s, "_") }

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return fmt.Sprint(time.Now().UnixNano())
	}
	return hex.EncodeToString(b)
}

// trimOutput keeps the compiler's output readable: at most 40 lines.
func trimOutput(out []byte) string {
	s := strings.TrimSpace(string(out))
	lines := strings.Split(s, "\n")
	if len(lines) > 40 {
		lines = append(lines[:40], fmt.Sprintf("... (%d more lines)", len(lines)-40))
	}
	return strings.Join(lines, "\n")
}
