package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lowScript is a minimized objective: lowest value 0 at x = 0.3.
const lowScript = `package low

import (
	"context"

	"github.com/tesbo/tesbo/sdk"
)

func Info() sdk.Info {
	return sdk.Info{Name: "low", Minimize: true, Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}
}

func Evaluate(ctx context.Context, x []float64) (float64, error) {
	return (x[0] - 0.3) * (x[0] - 0.3), nil
}
`

// trialsJSON runs 'trials --format json' with extra args and decodes it.
func trialsJSON(t *testing.T, dir string, args ...string) []jsonTrial {
	t.Helper()
	r := cli(t, dir, append([]string{"trials", "--format", "json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("trials %v: exit %d: %s", args, r.code, r.stderr)
	}
	var out []jsonTrial
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var jt jsonTrial
		if err := json.Unmarshal([]byte(l), &jt); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, jt)
	}
	return out
}

// ids lists the trials' IDs.
func ids(ts []jsonTrial) []int {
	out := make([]int, len(ts))
	for i, jt := range ts {
		out[i] = jt.ID
	}
	return out
}

// bestFirst returns the IDs of the complete trials, best value first in
// the objective's sense, ties by ID.
func bestFirst(ts []jsonTrial, minimize bool) []int {
	done := slices.DeleteFunc(slices.Clone(ts), func(jt jsonTrial) bool { return jt.Value == nil })
	slices.SortStableFunc(done, func(a, b jsonTrial) int {
		switch {
		case *a.Value == *b.Value:
			return a.ID - b.ID
		case (*a.Value > *b.Value) != minimize:
			return -1
		}
		return 1
	})
	return ids(done)
}

// 'trials --best N' lists the N best complete trials, best first in the
// objective's sense (highest when maximized, lowest when minimized);
// '--sort value' orders every trial so, '--sort id' keeps ID order.
func TestTrialsBestAndSort(t *testing.T) {
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	if err := os.Mkdir(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(plugins, "low.go"), lowScript)
	for _, c := range []struct {
		objective string
		minimize  bool
		plugins   string
	}{{"grid", false, pluginsDir}, {"low", true, plugins}} {
		t.Run(c.objective, func(t *testing.T) {
			if r := cli(t, dir, "run", "--objective", c.objective, "--acq", "random", "--init", "4", "--iters", "3", "--batch", "2",
				"--db", "t.db", "--study", c.objective, "--plugins", c.plugins, "--json"); r.code != 0 {
				t.Fatalf("run: %d %s", r.code, r.stderr)
			}
			all := trialsJSON(t, dir, "--db", "t.db", "--study", c.objective)
			if len(all) != 10 {
				t.Fatalf("%d trials", len(all))
			}
			want := bestFirst(all, c.minimize)
			if got := ids(trialsJSON(t, dir, "--db", "t.db", "--study", c.objective, "--best", "3")); !slices.Equal(got, want[:3]) {
				t.Fatalf("--best 3: %v, want %v", got, want[:3])
			}
			if got := ids(trialsJSON(t, dir, "--db", "t.db", "--study", c.objective, "--sort", "value")); !slices.Equal(got, want) {
				t.Fatalf("--sort value: %v, want %v", got, want)
			}
			top := slices.Clone(want[:3])
			slices.Sort(top)
			if got := ids(trialsJSON(t, dir, "--db", "t.db", "--study", c.objective, "--best", "3", "--sort", "id")); !slices.Equal(got, top) {
				t.Fatalf("--best 3 --sort id: %v, want %v", got, top)
			}
			if got := trialsJSON(t, dir, "--db", "t.db", "--study", c.objective, "--best", "100"); len(got) != 10 {
				t.Fatalf("--best 100: %d trials", len(got))
			}
			r := cli(t, dir, "trials", "--db", "t.db", "--study", c.objective, "--best", "1")
			if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[1], fmt.Sprint(want[0])+" ") {
				t.Fatalf("table --best 1: exit %d %q", r.code, r.stdout)
			}
		})
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--best", "-1"}, "--best -1"},
		{[]string{"--best", "0"}, "--best 0"},
		{[]string{"--sort", "name"}, "--sort \"name\""},
	} {
		checkUsageError(t, cli(t, dir, append([]string{"trials", "--db", "t.db", "--study", "grid"}, c.args...)...), []string{c.want})
	}
	r := cli(t, dir, "trials", "--help")
	if !strings.Contains(r.stdout, "--best") || !strings.Contains(r.stdout, "--sort") {
		t.Fatalf("trials --help does not describe --best and --sort:\n%s", r.stdout)
	}
}
