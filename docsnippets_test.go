package tesbo

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// snippetDocs are the documents whose Go blocks a reader pastes.
var snippetDocs = []string{"README.md", filepath.Join("sdk", "README.md")}

// TestGoSnippetsCompile compiles (go build) every ```go block of the docs,
// so that a snippet that hides a type or calls an API wrongly fails here
// rather than in a reader's editor. Each block must be a complete Go file
// — package clause, imports — and is built as a package of its own inside
// this module through a -overlay: nothing is written into the checkout.
func TestGoSnippetsCompile(t *testing.T) {
	t.Parallel()
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	overlay := map[string]string{}
	source := map[string]string{} // package directory name → "doc:line" of its first line
	var pkgs []string
	for _, doc := range snippetDocs {
		for _, f := range fences(t, doc) {
			if f.Lang != "go" {
				continue
			}
			if _, err := parser.ParseFile(token.NewFileSet(), "", f.Code, parser.PackageClauseOnly); err != nil {
				t.Errorf("%s:%d: a go block must be a complete Go file (package clause, imports, every name it uses) so that it compiles as pasted: %v", doc, f.Line, err)
				continue
			}
			name := fmt.Sprintf("%s_%d", strings.NewReplacer("/", "_", ".", "_").Replace(doc), f.Line)
			file := filepath.Join(tmp, name+".go")
			if err := os.WriteFile(file, []byte(f.Code), 0o644); err != nil {
				t.Fatal(err)
			}
			overlay[filepath.Join(root, "internal", "docsnippets", name, "snippet.go")] = file
			source[name] = fmt.Sprintf("%s:%d", doc, f.Line)
			pkgs = append(pkgs, "./internal/docsnippets/"+name)
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("no go blocks found in the docs")
	}
	js, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovl := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovl, js, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", append([]string{"build", "-overlay", ovl}, pkgs...)...).CombinedOutput()
	if err != nil {
		t.Errorf("the docs' go blocks do not compile: %v\n%s", err, snippetLines(string(out), source))
	}
}

// snippetPos matches a snippet's position in the go command's output: its
// file in the temporary directory or its package in the overlay.
var snippetPos = regexp.MustCompile(`[^\s:]*?(\w+_md_\d+)(?:/snippet)?\.go:(\d+)`)

// snippetLines rewrites the snippets' positions in go build's output to
// the documents' own lines.
func snippetLines(out string, source map[string]string) string {
	return snippetPos.ReplaceAllStringFunc(out, func(m string) string {
		s := snippetPos.FindStringSubmatch(m)
		at, ok := source[s[1]]
		if !ok {
			return m
		}
		i := strings.LastIndex(at, ":")
		first, _ := strconv.Atoi(at[i+1:])
		line, _ := strconv.Atoi(s[2])
		return fmt.Sprintf("%s:%d", at[:i], first+line-1)
	})
}
