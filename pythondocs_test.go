package tesbo

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestPythonDocsNameEveryParamKind fails when the Python objective's
// README leaves out a parameter kind of the protocol: a Python author
// learns the kinds there, not from the .proto file.
func TestPythonDocsNameEveryParamKind(t *testing.T) {
	proto, err := os.ReadFile(filepath.Join("sdk", "proto", "tesbo.proto"))
	if err != nil {
		t.Fatal(err)
	}
	enum := regexp.MustCompile(`(?s)enum ParamKind \{(.*?)\}`).FindSubmatch(proto)
	if enum == nil {
		t.Fatal("sdk/proto/tesbo.proto has no enum ParamKind")
	}
	kinds := regexp.MustCompile(`(?m)^\s*(PARAM_KIND_\w+)\s*=`).FindAllSubmatch(enum[1], -1)
	if len(kinds) < 4 {
		t.Fatalf("found %d kinds in enum ParamKind, want at least 4", len(kinds))
	}
	doc := filepath.Join("examples", "python-objective", "README.md")
	readme, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if name := "pb." + string(k[1]); !strings.Contains(string(readme), name) {
			t.Errorf("%s does not name %s", doc, name)
		}
	}
}
