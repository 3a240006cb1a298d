package loader

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// checksum returns the SHA-256 users pin a plugin with: of the file for an
// executable, of the source tree (treeHash) for Go sources and scripts.
func (u *unit) checksum() (string, error) {
	if u.sha != "" {
		return u.sha, nil
	}
	var sum string
	var err error
	switch u.source {
	case SourceExecutable:
		sum, err = fileHash(u.path)
	default:
		sum, err = treeHash(u.path)
	}
	if err == nil {
		u.sha = sum
	}
	return sum, err
}

// verifySource checks a pinned checksum of a Go source or script plugin
// (executables are checked by go-plugin's SecureConfig when they start).
func (u *unit) verifySource() error {
	if u.pin == "" || u.source == SourceExecutable {
		return nil
	}
	return u.verifyPin("start")
}

// verifyPin hashes u afresh and refuses it unless the hash is its pin.
func (u *unit) verifyPin(op string) error {
	var got, what string
	var err error
	if u.source == SourceExecutable {
		got, err = fileHash(u.path)
		what = "the file " + u.path + " hashes"
	} else {
		got, err = treeHash(u.path)
		what = "the sources in " + u.path + " hash"
	}
	if err != nil {
		return &Error{Plugin: u.name, Op: op, Cause: ErrChecksum, Err: err}
	}
	if got != u.pin {
		via := ""
		if u.pinKey != u.name {
			via = fmt.Sprintf(" (pinned as %s)", u.pinKey)
		}
		return &Error{Plugin: u.name, Op: op, Cause: ErrChecksum,
			Err: fmt.Errorf("%s to %s, not the pinned %s%s; refusing to run it", what, got, u.pin, via)}
	}
	return nil
}

// VerifyChecksums checks every pin of Options.Checksums now, before
// anything runs: it fails when a pin names no plugin, is not 64 hex
// digits, or differs from the SHA-256 of what would be loaded. The pins
// are checked again when each plugin starts (what starts is what was
// verified, or it is refused).
func (r *Registry) VerifyChecksums() error {
	if r.pinErr != nil {
		return r.pinErr
	}
	for _, u := range r.units {
		if u.pin == "" || u.err != nil {
			continue
		}
		if err := u.verifyPin("verify"); err != nil {
			return err
		}
	}
	return nil
}

// resolvePins assigns each pin of Options.Checksums to the plugin entry it
// names: the entry itself ("synthetic") or an objective it serves in the
// form --objective takes ("synthetic/branin", the longest entry name
// followed by "/"). It returns why the pins cannot be applied: a name that
// matches no entry, a value that is not 64 hex digits, or two names
// pinning one entry to different values.
func resolvePins(pins map[string]string, units map[string]*unit, dir string) error {
	keys := make([]string, 0, len(pins))
	for k := range pins {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		want := strings.ToLower(strings.TrimSpace(pins[key]))
		if b, err := hex.DecodeString(want); err != nil || len(b) != sha256.Size {
			return &Error{Plugin: key, Op: "open", Cause: ErrChecksum, Err: fmt.Errorf("checksum %q is not 64 hex digits", pins[key])}
		}
		u := pinTarget(units, key)
		if u == nil {
			return &Error{Plugin: key, Op: "open", Cause: ErrChecksum,
				Err: fmt.Errorf("no plugin in %s is named %q or serves it as ENTRY/NAME; pin an entry 'tesbo-host plugins' lists", dir, key)}
		}
		if u.pin != "" && u.pin != want {
			return &Error{Plugin: u.name, Op: "open", Cause: ErrChecksum,
				Err: fmt.Errorf("conflicting checksums: %s pins it to %s, %s to %s", u.pinKey, u.pin, key, want)}
		}
		u.pin, u.pinKey = want, key
	}
	return nil
}

// pinTarget returns the entry named key, or else the entry with the
// longest name N such that key starts with N + "/"; nil if none.
func pinTarget(units map[string]*unit, key string) *unit {
	if u, ok := units[key]; ok {
		return u
	}
	for i := strings.LastIndexByte(key, '/'); i > 0; i = strings.LastIndexByte(key[:i], '/') {
		if u, ok := units[key[:i]]; ok {
			return u
		}
	}
	return nil
}

func fileHash(path string) (string, error) {
	f, _, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// treeHash hashes a file, or a directory's regular files recursively
// (skipping hidden entries, testdata and node_modules), as the sorted
// sequence of (relative path, length, content).
func treeHash(root string) (string, error) {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	files, err := treeFiles(root)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, f := range files {
		if err := hashFile(h, root, f); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func treeFiles(root string) ([]string, error) {
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{root}, nil
	}
	var files []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

func hashFile(h io.Writer, root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." {
		rel = filepath.Base(path)
	}
	f, fi, err := openRegular(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), fi.Size())
	_, err = io.Copy(h, f)
	return err
}
