package tesbo

import (
	"os"
	"strings"
	"testing"
)

// fence is one fenced code block of a Markdown file.
type fence struct {
	Lang    string // the info string after the opening ```, e.g. "go"
	Line    int    // the 1-based line of the first line of code
	Heading string // the last heading above the block, with its #s
	Code    string
}

// fences returns the fenced code blocks of the Markdown file at path
// (``` fences at the start of a line; the docs use no other kind).
func fences(t *testing.T, path string) []fence {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []fence
	var cur *fence
	var code []string
	heading := ""
	for i, line := range strings.Split(string(data), "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &fence{Lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), Line: i + 2, Heading: heading}
			code = code[:0]
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.Code = strings.Join(code, "\n") + "\n"
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			code = append(code, line)
		case strings.HasPrefix(line, "#"):
			heading = line
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a code block is never closed", path, cur.Line-1)
	}
	return out
}
