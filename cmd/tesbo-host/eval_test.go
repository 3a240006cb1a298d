package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// evalCLI runs 'tesbo-host eval args' with stdin and returns its outputs.
func evalCLI(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	return runBinaryInput(t, t.TempDir(), 2*time.Minute, nil, stdin, append([]string{"eval"}, args...)...)
}

// jsonLines decodes every stdout line.
func jsonLines(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// TestEvalCLI: the bench problem syntax and --param give the same problem,
// the seed fixes the noise, bad lines get errors and EOF exits 0.
func TestEvalCLI(t *testing.T) {
	in := `{"x": [0.2, 0.4, 0.6]}` + "\n" + `{"x": [0.2]}` + "\n" + `{"x": [0.9, 0.1, 0.5]}` + "\n"
	a := evalCLI(t, in, "--objective", "synthetic/ackley:dim=3", "--seed", "4", "--noise-var", "0.01")
	b := evalCLI(t, in, "--objective", "synthetic/ackley", "--param", "dim=3", "--seed", "4", "--noise-var", "0.01")
	c := evalCLI(t, in, "--objective", "synthetic/ackley", "--param", "dim=3", "--seed", "5", "--noise-var", "0.01")
	for _, r := range []result{a, b, c} {
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	}
	la, lc := jsonLines(t, a.stdout), jsonLines(t, c.stdout)
	if len(la) != 4 || la[0]["dim"] != 3.0 || la[0]["optimum"] != 0.0 || la[0]["name"] != "synthetic/ackley:dim=3" {
		t.Fatalf("output %v: want a 3-d description named synthetic/ackley:dim=3 with optimum 0 and 3 replies", la)
	}
	if !strings.Contains(la[2]["error"].(string), "1 coordinates") {
		t.Errorf("short x: got %v", la[2])
	}
	if strings.Join(strings.Fields(a.stdout)[1:], " ") != strings.Join(strings.Fields(b.stdout)[1:], " ") {
		t.Errorf("--objective NAME:dim=3 and --param dim=3 differ:\n%s\n%s", a.stdout, b.stdout)
	}
	for _, i := range []int{1, 3} {
		if la[i]["f"] != lc[i]["f"] || la[i]["y"] == lc[i]["y"] || la[i]["y"] == la[i]["f"] {
			t.Errorf("line %d: seed 4 %v, seed 5 %v: want equal f, different noisy y", i, la[i], lc[i])
		}
	}
	if la[1]["f"].(float64) >= 0 {
		t.Errorf("ackley is served maximized (≤ 0): got %v", la[1])
	}
}

// TestEvalCLIPlugin: a plugin objective without a noise-free evaluation
// gets f null; bad flags are refused with exit 2 before anything is read.
func TestEvalCLIPlugin(t *testing.T) {
	r := evalCLI(t, `{"x": [0.3, 0.6]}`+"\n"+`{"x": [0, 0]}`, "--objective", "bowl")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	l := jsonLines(t, r.stdout)
	if len(l) != 3 || l[0]["optimum"] != 0.0 || l[1]["y"] != 0.0 || l[1]["f"] != nil || l[2]["y"].(float64) >= 0 {
		t.Errorf("output %v: want optimum 0, y 0 at the maximum with f null, then a negative y", l)
	}
	for _, args := range [][]string{
		{"--objective", "synthetic/nope"},
		{"--objective", "synthetic/ackley:dim=3", "--param", "dim=4"},
		{"--objective", "synthetic/branin", "--noise-var", "-1"},
		{"--objective", "synthetic/branin", "--param", "seed=3"},
		{"--objective", "synthetic/branin", "--param", "dim=3"},
	} {
		r := evalCLI(t, `{"x": [0.5, 0.5]}`+"\n", args...)
		if r.code != 2 || r.stdout != "" || len(errorLines(r.stderr)) != 1 {
			t.Errorf("eval %v: exit %d, stdout %q, stderr %q; want exit 2, one error line, no output", args, r.code, r.stdout, r.stderr)
		}
	}
}

// --eval-timeout bounds a plugin's evaluations under eval as under run: a
// slow one's line gets an error and serving goes on; a script's default
// limit (10 s) gives way to a longer one.
func TestEvalTimeout(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "slow.go"), `package slow

import (
	"context"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info { return sdk.Info{Name: "slow", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}} }

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	if x[0] > 0.5 {
		select {
		case <-time.After(time.Minute):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return x[0], nil
}
`)
	r := evalCLI(t, `{"x": [0.9]}`+"\n"+`{"x": [0.25]}`+"\n", "--plugins", dir, "--objective", "slow", "--eval-timeout", "1s")
	l := jsonLines(t, r.stdout)
	if r.code != 0 || len(l) != 3 || !strings.Contains(fmt.Sprint(l[1]["error"]), "no answer within 1s") || l[2]["y"] != 0.25 {
		t.Fatalf("exit %d, output %v (stderr %s): want the slow line's timeout error, then y 0.25", r.code, l, r.stderr)
	}
	if r := evalCLI(t, "", "--plugins", dir, "--objective", "slow", "--eval-timeout", "-1s"); r.code != 2 {
		t.Fatalf("--eval-timeout -1s: exit %d, want 2", r.code)
	}
}
