package loader

import (
	"errors"
	"fmt"
	"go/build"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Limits on what discovery reads into the host's memory. Scripts are read
// and parsed by the host (and compiled by Yaegi in their runner); a Go
// source file of a megabyte is already far larger than a hand-written
// objective.
const (
	// MaxScriptFileSize is the largest Go file of a script (or of a Go
	// source plugin's root package) discovery reads.
	MaxScriptFileSize = 1 << 20
	// MaxScriptSize is the most the Go files of one script directory may
	// hold together.
	MaxScriptSize = 4 << 20
)

// errNotRegular: a plugins-directory entry (or a file inside one) is not a
// regular file after symlinks are resolved: a named pipe would block its
// reader forever, a device such as /dev/zero never ends.
var errNotRegular = errors.New("not a regular file")

// notRegular says what a non-regular, non-directory file is.
func notRegular(path string, m fs.FileMode) error {
	kind := "special file"
	switch {
	case m&fs.ModeNamedPipe != 0:
		kind = "named pipe"
	case m&fs.ModeSocket != 0:
		kind = "socket"
	case m&fs.ModeCharDevice != 0:
		kind = "character device"
	case m&fs.ModeDevice != 0:
		kind = "device"
	case m&fs.ModeIrregular != 0:
		kind = "irregular file"
	}
	return fmt.Errorf("%s: %w (a %s); skipped", path, errNotRegular, kind)
}

// openRegular opens path for reading only if it is (or a symlink resolves
// to) a regular file. It never blocks on a named pipe: it stats first and
// opens with O_NONBLOCK, then checks the opened file again (the entry may
// have been replaced in between).
func openRegular(path string) (*os.File, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, notRegular(path, fi.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// readSource reads a Go file of a script: a regular file of at most
// MaxScriptFileSize bytes.
func readSource(path string) ([]byte, error) {
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > MaxScriptFileSize {
		return nil, sourceTooLarge(path, fi.Size())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxScriptFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxScriptFileSize { // grew since the stat
		return nil, sourceTooLarge(path, int64(len(b)))
	}
	return b, nil
}

func sourceTooLarge(path string, n int64) error {
	return fmt.Errorf("%s: %d bytes, more than the %s a script file may hold (loader.MaxScriptFileSize); skipped", path, n, FormatSize(MaxScriptFileSize))
}

// readSources reads the Go files of one script, at most MaxScriptSize
// bytes together.
func readSources(files []string) ([][]byte, error) {
	out := make([][]byte, len(files))
	total := 0
	for i, f := range files {
		b, err := readSource(f)
		if err != nil {
			return nil, err
		}
		total += len(b)
		if total > MaxScriptSize {
			return nil, fmt.Errorf("the Go files up to %s hold more than the %s a script may (loader.MaxScriptSize); skipped", f, FormatSize(MaxScriptSize))
		}
		out[i] = b
	}
	return out, nil
}

// buildContext is go/build's default context reading only regular files
// of bounded size, for discovery's package scans (build.ImportDir reads
// the header of every file in the directory).
var buildContext = func() build.Context {
	c := build.Default
	c.OpenFile = func(path string) (io.ReadCloser, error) {
		f, fi, err := openRegular(path)
		if err != nil {
			return nil, err
		}
		if fi.Size() > MaxScriptFileSize {
			f.Close()
			return nil, sourceTooLarge(path, fi.Size())
		}
		return f, nil
	}
	return c
}()
