// Package safetext makes text that comes from plugins (error messages,
// parameter and choice names, log lines) safe to keep and to show: bounded
// in length, unable to drive a terminal, inert in a spreadsheet. A plugin
// is someone else's program; what it says is data.
package safetext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Cap returns s unchanged when it has at most max bytes, else its first
// bytes (cut at a UTF-8 boundary) followed by "… (N bytes cut)", the whole
// at most max bytes long. max is at least 64.
func Cap(s string, max int) string {
	if len(s) <= max {
		return s
	}
	if max < 64 {
		max = 64
	}
	// The marker's length depends on N, which depends on where we cut:
	// reserve room for the longest marker s can need.
	room := max - len(marker(len(s)))
	for room > 0 && !utf8.RuneStart(s[room]) {
		room--
	}
	return s[:room] + marker(len(s)-room)
}

func marker(n int) string { return fmt.Sprintf("… (%d bytes cut)", n) }

// Terminal returns s with every character that a terminal could act on
// escaped, so printing it cannot move the cursor, change colours, set the
// window title or hide text: C0 controls but tab (ESC shows as \x1b),
// DEL, C1 controls (\u009b) and invalid UTF-8 bytes (\xff). Other text,
// newlines excepted, is unchanged.
func Terminal(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case isControl(r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || isControl(r) {
			return true
		}
		i += n
	}
	return false
}

// isControl reports the characters Terminal escapes: C0 but tab, DEL, C1.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r < 0xa0)
}

// HasControl reports whether s holds a control character (C0 including
// tab and newline, DEL, C1) or is not valid UTF-8: text a name must not be.
func HasControl(s string) bool {
	return !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) })
}

// CSVCell returns s as a CSV cell a spreadsheet shows as text: a cell
// starting with =, +, -, @, tab or carriage return would be read as a
// formula (=HYPERLINK(...) runs when clicked), so it gets a leading single
// quote, which the spreadsheet hides (OWASP's CSV injection rule). Its
// control characters but newlines (a CSV cell may span lines) are
// escaped as Terminal does: a CSV file is often printed to a terminal.
// Apply it to text cells, not to numbers the program formatted itself (a
// negative value stays a number).
func CSVCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		s = "'" + s
	}
	return TerminalLines(s)
}

// TerminalLines is Terminal that keeps s's newlines: for text of several
// lines (a compiler's output in an error, a CSV cell).
func TerminalLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Terminal(l)
	}
	return strings.Join(lines, "\n")
}
