package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// want is the verdict on every exported name of testdata/mod/lib (see
// the comments there); cmd, internal/x and the generated file are not
// counted.
var want = map[string]bool{
	"Used": true, "Unused": false, "OwnTest": false,
	"T": true, "New": true, "T.String": true, "T.Helper": false,
	"E": false, "E.Error": true, "E.Unwrap": true,
}

func verdicts(t *testing.T, dir string) (map[string]bool, *report) {
	t.Helper()
	rep, _, _, err := measure(dir, "./...")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, nm := range rep.names {
		if nm.pkg != "example.com/mod/lib" {
			t.Errorf("%s.%s counted: only lib is a library package", nm.pkg, nm.id)
		}
		got[nm.id] = nm.used
	}
	return got, rep
}

func TestMeasure(t *testing.T) {
	got, rep := verdicts(t, "testdata/mod")
	for id, used := range want {
		if g, ok := got[id]; !ok {
			t.Errorf("%s not counted", id)
		} else if g != used {
			t.Errorf("%s used = %v, want %v", id, g, used)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("%s counted, want it left out", id)
		}
	}
	if s := rep.share(); s != 40 {
		t.Errorf("share = %v %%, want 40 %% (4 of 10)", s)
	}
	var out strings.Builder
	rep.print(&out, true)
	if !strings.Contains(out.String(), "OwnTest (its own external tests use it)") ||
		!strings.Contains(out.String(), "total: 4 of 10 exported names (40.0 %)") {
		t.Errorf("report:\n%s", out.String())
	}
}

// TestUnexport renames the unused names of a copy of the fixture, which
// must still build, and leaves the one its own tests use.
func TestUnexport(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/mod")); err != nil {
		t.Fatal(err)
	}
	rep, m, pkgs, err := measure(dir, "./...")
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	if err := m.unexport(pkgs, rep, map[string]bool{"example.com/mod/lib": true}, nil, &log); err != nil {
		t.Fatal(err)
	}
	t.Log(log.String())
	// Fails if the result does not build; the methods of e, now
	// unexported, are no longer counted.
	got, _ := verdicts(t, dir)
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if w := []string{"New", "OwnTest", "T", "T.String", "Used"}; !slices.Equal(ids, w) {
		t.Errorf("exported after unexport: %v, want %v", ids, w)
	}
	src, _ := os.ReadFile(filepath.Join(dir, "lib", "lib.go"))
	for _, s := range []string{"func unused() { unusedHelper() }", "// unused is called by nobody.", "func (T) helper() {}", "type e struct"} {
		if !strings.Contains(string(src), s) {
			t.Errorf("lib.go lacks %q:\n%s", s, src)
		}
	}
}
