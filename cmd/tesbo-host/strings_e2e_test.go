package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileScript is an objective whose strings are attacks on what shows
// them: a parameter name that a spreadsheet runs as a formula, choices
// starting with - and @, and an error starting with = that holds terminal
// escape sequences (clear the screen, set the window title).
const hostileScript = `package hostile

import (
	"context"
	"errors"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "hostile", Params: []sdk.Param{
		{Name: "=HYPERLINK(\"http://example.com\",\"x\")", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "c", Kind: sdk.Categorical, Choices: []string{"-1+1", "@SUM(1)"}},
	}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	if x[0] < 0.5 {
		return 0, errors.New("=1+1 \x1b[2J\x1b]0;owned\x07 failed")
	}
	return x[0], nil
}
`

// TestHostileStrings: strings from a plugin reach no terminal as escape
// sequences (trials --format table, plugins) and no CSV cell as a formula
// (trials --format csv).
func TestHostileStrings(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "hostile.go"), hostileScript)
	writeFile(t, filepath.Join(plugins, "\x1b[31mred.go"), "package red\nfunc Info( {\n")
	db := filepath.Join(dir, "s.db")
	r := cli(t, dir, "run", "--plugins", plugins, "--objective", "hostile", "--acq", "random",
		"--init", "8", "--iters", "1", "--seed", "1", "--db", db, "--study", "h", "--log-level", "error")
	if r.code != 0 {
		t.Fatalf("run: exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b") {
		t.Errorf("run's summary holds an escape sequence:\n%q", r.stdout)
	}

	r = cli(t, dir, "trials", "--db", db, "--study", "h", "--format", "table")
	if r.code != 0 {
		t.Fatalf("trials table: exit %d: %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "\x1b") || strings.Contains(r.stdout, "\x07") || !strings.Contains(r.stdout, `=1+1 \x1b[2J\x1b]0;owned\x07 failed`) {
		t.Errorf("trials table does not show the error escaped:\n%q", r.stdout)
	}

	r = cli(t, dir, "trials", "--db", db, "--study", "h", "--format", "csv")
	if r.code != 0 {
		t.Fatalf("trials csv: exit %d: %s", r.code, r.stderr)
	}
	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i, rec := range recs {
		for j, c := range rec {
			if c != "" && strings.ContainsRune("=+@\t\r", rune(c[0])) || strings.HasPrefix(c, "-1+1") {
				t.Errorf("csv row %d cell %d is a formula: %q", i, j, c)
			}
		}
		if i > 0 && strings.Contains(rec[5], `=1+1 \x1b[2J`) { // escaped: a CSV is often printed to a terminal
			failed++
		}
	}
	if strings.ContainsAny(r.stdout, "\x1b\x07") {
		t.Errorf("csv holds raw control characters")
	}
	if recs[0][2] != `'=HYPERLINK("http://example.com","x")` || failed == 0 {
		t.Errorf("csv header %q, %d failed rows with a quoted error; want the name quoted and failures", recs[0], failed)
	}

	r = cli(t, dir, "plugins", "--plugins", plugins)
	if strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stdout, `\x1b[31mred`) {
		t.Errorf("plugins shows an escape sequence or hides the broken entry:\n%q", r.stdout)
	}
}
