package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLoadRunsReadsCLIOutput: the trials of the CLI's JSON lines become
// runs by the acquisition in the bench study name, completed trials only,
// lowest value first, the point in the objective's parameter order
// (synth.Names).
func TestLoadRunsReadsCLIOutput(t *testing.T) {
	// As `tesbo-host trials --format json` prints them.
	in := `{"id":3,"state":"complete","params":{"beard":0.5,"mustache":0,"forehead_scar":0,"cheek_scar":0,"mole":0,"glasses_square":0,"glasses_round":1,"smile":0},"value":0.4125,"error":"","worker":"","attempts":1,"iter":1,"started":"2026-11-27T11:19:35.901939096Z","finished":"2026-11-27T11:19:35.902046986Z","eval_s":0.5}
{"id":4,"state":"complete","params":{"beard":0.25,"mustache":0,"forehead_scar":0,"cheek_scar":0,"mole":0,"glasses_square":0,"glasses_round":1,"smile":0.75},"value":0.25,"error":"","worker":"","attempts":1,"iter":2,"eval_s":0.5}
{"id":5,"state":"failed","params":{"beard":0.25,"mustache":0,"forehead_scar":0,"cheek_scar":0,"mole":0,"glasses_square":0,"glasses_round":1,"smile":0.75},"value":null,"error":"boom","worker":"","attempts":3,"iter":2,"eval_s":0}
`
	by, err := loadRuns([]string{"bench/facerec/qei/q20/s1=-"}, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	runs := by["qei"]
	if len(by) != 1 || len(runs) != 1 || runs[0].name != "bench/facerec/qei/q20/s1" || len(runs[0].trials) != 2 {
		t.Fatalf("runs %+v, want one qei run with 2 completed trials", by)
	}
	best := runs[0].trials[0]
	if best.ID != 4 || best.Iteration != 2 || best.Value != 0.25 {
		t.Errorf("best trial %+v, want id 4 (iteration 2) at 0.25", best)
	}
	if want := []float64{0.25, 0, 0, 0, 0, 0, 1, 0.75}; !equal(best.X, want) {
		t.Errorf("point %v, want %v", best.X, want)
	}
	// The helper the other tests write their input with agrees.
	line, err := json.Marshal(cliTrial(4, 2, "complete", best.X, &best.Value))
	if err != nil {
		t.Fatal(err)
	}
	s, err := readStudy("s", strings.NewReader(string(line)))
	if err != nil || len(s.trials) != 1 || !equal(s.trials[0].X, best.X) {
		t.Errorf("cliTrial's line %s read as %+v, %v", line, s, err)
	}
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLoadRunsRejects: bad arguments and input say what is wrong.
func TestLoadRunsRejects(t *testing.T) {
	for _, tc := range []struct {
		args []string
		in   string
		want string
	}{
		{nil, "", "no runs given"},
		{[]string{"studies.db"}, "", "want STUDY=FILE"},
		{[]string{"my-study=-"}, "", "not a bench study name"},
		{[]string{"bench/facerec/qei/q20/s0=-", "bench/facerec/qei/q20/s1=-"}, "", "only one study"},
		{[]string{"bench/facerec/qei/q20/s0=-"}, "not json\n", "line 1"},
		{[]string{"bench/branin/qei/q1/s0=-"}, `{"id":0,"state":"complete","params":{"x1":1,"x2":2},"value":1,"iter":0}` + "\n", "is this a facerec study"},
		{[]string{"bench/facerec/qei/q20/s0=-"}, "", "no completed facerec evaluations"},
		{[]string{"bench/facerec/qei/q20/s0=/nonexistent/trials.jsonl"}, "", "no such file"},
	} {
		_, err := loadRuns(tc.args, strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
