package sdk

import (
	"go/build"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestImportsNoProjectPackage: sdk is what plugin authors import, so it
// must not pull in the rest of tesbo (gp, host, ...). Walking the imports
// of sdk (its tests included) and of every tesbo package reached from it
// finds only sdk, its subpackages and internal/pluginwire (the protocol
// glue sdk shares with the host's loader).
func TestImportsNoProjectPackage(t *testing.T) {
	const module = "github.com/tesbo/tesbo/"
	reached := map[string]bool{}
	var walk func(importPath string, tests bool)
	walk = func(importPath string, tests bool) {
		dir := filepath.Join("..", filepath.FromSlash(strings.TrimPrefix(importPath, module)))
		bp, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("read package %s in %s: %v", importPath, dir, err)
		}
		imports := bp.Imports
		if tests {
			// In-package and external (package sdk_test) test files.
			imports = append(append(append([]string(nil), imports...), bp.TestImports...), bp.XTestImports...)
		}
		for _, imp := range imports {
			rel, ours := strings.CutPrefix(imp, module)
			if !ours || reached[imp] {
				continue
			}
			if rel != "sdk" && !strings.HasPrefix(rel, "sdk/") && rel != "internal/pluginwire" {
				t.Errorf("%s imports %s: sdk may import no other tesbo package", importPath, imp)
				continue
			}
			reached[imp] = true
			walk(imp, false)
		}
	}
	walk(module+"sdk", true)
	var got []string
	for p := range reached {
		got = append(got, p)
	}
	sort.Strings(got)
	// The walk really followed the imports: sdk uses its generated protocol.
	if !reached[module+"sdk/proto"] {
		t.Fatalf("walk reached %v, not sdk/proto", got)
	}
	t.Logf("tesbo packages reached from sdk: %v", got)
}
