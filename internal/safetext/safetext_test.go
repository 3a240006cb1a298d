package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCap(t *testing.T) {
	if got := Cap("short", 100); got != "short" {
		t.Fatalf("Cap(short) = %q", got)
	}
	long := strings.Repeat("é", 3<<20/2) // 3 MiB of two-byte runes
	got := Cap(long, 4096)
	if len(got) > 4096 || !utf8.ValidString(got) || !strings.HasSuffix(got, " bytes cut)") {
		t.Fatalf("Cap(3 MiB) has %d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[len(got)-30:])
	}
	kept := got[:strings.LastIndex(got, "… (")]
	if want := marker(len(long) - len(kept)); !strings.HasSuffix(got, want) || !strings.HasPrefix(long, kept) {
		t.Fatalf("marker %q does not count the cut bytes (%d kept)", got[len(kept):], len(kept))
	}
}

func TestTerminal(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, tab\tkept":   "plain text, tab\tkept",
		"\x1b[2J\x1b]0;owned\x07": `\x1b[2J\x1b]0;owned\x07`,
		"csi \u009b31m c1":        `csi \u009b31m c1`,
		"del \x7f bad \xff byte":  `del \x7f bad \xff byte`,
		"line\nbreak\r":           `line\x0abreak\x0d`,
		"ünïcödé ≤ 漢字 stays":      "ünïcödé ≤ 漢字 stays",
	} {
		if got := Terminal(in); got != want {
			t.Errorf("Terminal(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHasControl(t *testing.T) {
	for s, want := range map[string]bool{"x1": false, "größe": false, "a\tb": true, "a\x1bb": true, "\u0085": true, "\xff": true} {
		if HasControl(s) != want {
			t.Errorf("HasControl(%q) = %v", s, !want)
		}
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\",\"y\")": "'=HYPERLINK(\"http://x\",\"y\")",
		"+1":                             "'+1", "-2+3": "'-2+3", "@SUM(A1)": "'@SUM(A1)", "\tx": "'\tx", "\rx": `'\x0dx`,
		"x1": "x1", "": "", "a=b": "a=b", "e\x1b]0;t\a": `e\x1b]0;t\x07`, "two\nlines": "two\nlines",
	} {
		if got := CSVCell(in); got != want {
			t.Errorf("CSVCell(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTerminalLines(t *testing.T) {
	if got, want := TerminalLines("a.go:3: bad\x1b[2J\nb.go:4: worse\r"), `a.go:3: bad\x1b[2J`+"\n"+`b.go:4: worse\x0d`; got != want {
		t.Errorf("TerminalLines = %q, want %q", got, want)
	}
}
