// Package testenv holds what the tests of several packages share about the
// machine they run on. Tests that need an installed dependency (a data
// set, an npm or Debian package) skip without it, except under CI (the
// environment variable CI set), where scripts/deps.sh installs everything:
// there a missing dependency is a broken set-up and fails the test.
package testenv

import (
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Need reports a missing dependency: t fails with msg when CI is set and
// is skipped with msg otherwise.
func Need(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// PythonGRPC returns the path of a Python interpreter that can import grpc,
// or "".
func PythonGRPC() string {
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import grpc").Run() == nil {
			if p, err := exec.LookPath(py); err == nil {
				return p
			}
		}
	}
	return ""
}

// NeedPythonGRPC returns PythonGRPC(), calling Need when there is none.
func NeedPythonGRPC(t testing.TB) string {
	t.Helper()
	py := PythonGRPC()
	if py == "" {
		Need(t, "no python3 can import grpc: install it (apt-get install python3-grpcio python3-cryptography)")
	}
	return py
}

// CheckPNG reports an error on t unless path holds a PNG image at least
// 100 pixels wide and high.
func CheckPNG(t testing.TB, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("%s: tiny image %v", path, b)
	}
}

// PythonPluginDir returns a fresh plugins directory holding one executable,
// "branin-py", that runs the Python objective script (relative to the test's
// directory) with a Python that can import grpc (NeedPythonGRPC).
func PythonPluginDir(t *testing.T, script string) string {
	t.Helper()
	return PythonPlugin(t, script, "branin-py")
}

// PythonPlugin is PythonPluginDir with the executable, and so the plugin,
// called name.
func PythonPlugin(t *testing.T, script, name string) string {
	t.Helper()
	py := NeedPythonGRPC(t)
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %s %s\n", py, abs)
	if err := os.WriteFile(filepath.Join(dir, name), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
