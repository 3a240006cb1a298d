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
	want, ok := u.r.opts.Checksums[u.name]
	if !ok || u.source == SourceExecutable {
		return nil
	}
	got, err := treeHash(u.path)
	if err != nil {
		return &Error{Plugin: u.name, Op: "start", Cause: ErrChecksum, Err: err}
	}
	if !strings.EqualFold(strings.TrimSpace(want), got) {
		return &Error{Plugin: u.name, Op: "start", Cause: ErrChecksum,
			Err: fmt.Errorf("the sources in %s hash to %s, not the pinned %s; refusing to run them", u.path, got, want)}
	}
	return nil
}

func fileHash(path string) (string, error) {
	f, err := os.Open(path)
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
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), fi.Size())
	_, err = io.Copy(h, f)
	return err
}
