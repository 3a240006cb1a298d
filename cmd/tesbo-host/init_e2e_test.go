package main

import (
	"os"
	"path/filepath"
	"testing"
)

// declaredScript is an objective that declares its initial design.
const declaredScript = `package declared

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "declared", InitialDesign: 4, Params: []sdk.Param{{Name: "x", Kind: sdk.Float, Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) { return -(x[0] - 0.3) * (x[0] - 0.3), nil }
`

// Without --init a study starts with the design its objective declares
// (sdk.Info.InitialDesign: the benchmark functions declare the paper's 2),
// else 10, at most the points of an integer space — the defaults the CLI
// had when it chose by the objective's name (synthetic/* 2, others 10).
func TestRunDefaultInit(t *testing.T) {
	declared := t.TempDir()
	if err := os.WriteFile(filepath.Join(declared, "declared.go"), []byte(declaredScript), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		objective string
		plugins   []string
		want      int
	}{
		{"synthetic/branin", nil, 2},                     // gRPC plugin declaring 2
		{"user/hpo4", nil, 10},                           // same plugin, declares nothing
		{"bowl", nil, 10},                                // script, declares nothing
		{"grid", nil, 9},                                 // 3 × 3 integer points
		{"declared", []string{"--plugins", declared}, 4}, // script declaring 4
	} {
		t.Run(c.objective, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"run", "--objective", c.objective, "--acq", "random", "--iters", "1", "--db", "d.db", "--study", "s"}, c.plugins...)
			if r := cli(t, dir, args...); r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			trials, _ := loadTrials(t, filepath.Join(dir, "d.db"), "s")
			design := 0
			for _, tr := range trials {
				if tr.Iteration == 0 {
					design++
				}
			}
			if design != c.want {
				t.Errorf("initial design of %d points, want %d", design, c.want)
			}
		})
	}
}
