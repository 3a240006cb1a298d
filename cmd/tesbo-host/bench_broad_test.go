package main

import (
	"strings"
	"testing"
)

// listLines runs 'bench --list' with args and returns its lines split at
// tabs (label, half, init, iters).
func listLines(t *testing.T, args ...string) [][]string {
	t.Helper()
	r := cli(t, t.TempDir(), append([]string{"bench", "--list"}, args...)...)
	if r.code != 0 {
		t.Fatalf("bench --list %v: exit %d, %s", args, r.code, r.stderr)
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		out = append(out, strings.Split(l, "\t"))
	}
	return out
}

// TestBenchBroadList: --suite broad lists its problems with halves and
// budgets without running anything; --half, --bbob-dims, --bbob-instances
// and --iters select and override; bad values are refused.
func TestBenchBroadList(t *testing.T) {
	all := listLines(t, "--suite", "broad")
	halves := map[string]int{}
	for _, l := range all {
		halves[l[1]]++
	}
	if len(all) != 133 || halves["tune"] != 67 || halves["held-out"] != 66 {
		t.Errorf("broad suite: %d problems, halves %v; want 133 (67 tune, 66 held-out)", len(all), halves)
	}
	want := map[string]string{"synthetic/shekel": "tune 2 35", "user/hpo4": "held-out 8 35", "mixed/func2c": "tune 8 30",
		"synthetic/bbob-f24:dim=5:instance=6": "held-out 2 35"}
	for _, l := range all {
		if w, ok := want[l[0]]; ok {
			if got := strings.Join(l[1:], " "); got != w {
				t.Errorf("%s: %q, want %q", l[0], got, w)
			}
			delete(want, l[0])
		}
	}
	if len(want) > 0 {
		t.Errorf("missing from the list: %v", want)
	}
	held := listLines(t, "--suite", "broad", "--half", "held-out", "--bbob-dims", "10", "--bbob-instances", "6-15", "--iters", "7")
	var bbob int
	for _, l := range held {
		if l[1] != "held-out" || l[3] != "7" {
			t.Errorf("held-out list with --iters 7: %v", l)
		}
		if strings.HasPrefix(l[0], "synthetic/bbob-f") {
			bbob++
			if !strings.Contains(l[0], ":dim=10:") {
				t.Errorf("%s: want d = 10", l[0])
			}
		}
	}
	if bbob != 24*10 {
		t.Errorf("%d BBOB problems, want 240 (24 functions × 10 held-out instances)", bbob)
	}
	if l := listLines(t, "--problems", "user/bumps2,user/fail2,synthetic/branin", "--half", "tune"); len(l) != 1 || l[0][0] != "user/bumps2" {
		t.Errorf("--problems with --half tune: %v, want user/bumps2 alone", l)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--suite", "broad", "--half", "both"}, `bad --half "both"`},
		{[]string{"--suite", "broad", "--bbob-instances", "16"}, "BBOB instance 16"},
		{[]string{"--suite", "broad", "--bbob-dims", "x"}, "bad --bbob-dims"},
		{[]string{"--suite", "user", "--bbob-dims", "2"}, "apply to --suite broad"},
		{[]string{"--suite", "broad", "--problems", "synthetic/branin"}, "exclude each other"},
		{[]string{"--problems", "synthetic/branin", "--half", "tune"}, "leaves no problem"},
	} {
		checkUsageError(t, cli(t, t.TempDir(), append([]string{"bench", "--list"}, c.args...)...), []string{c.want})
	}
}
