package prune

import "testing"

// curve builds a curve reporting values at steps 1, 2, 3, ...
func curve(id int, complete bool, values ...float64) Curve {
	c := Curve{ID: id, Complete: complete}
	for i, v := range values {
		c.Points = append(c.Points, Point{Step: i + 1, Value: v})
	}
	return c
}

func TestMedianHandComputed(t *testing.T) {
	// Complete trials' values at step 2: 1, 3, 5 → median 3; the pruned
	// trial's 0 at step 2 does not count (it would make the median 2).
	history := []Curve{
		curve(0, true, 0, 1, 9), curve(1, true, 0, 3, 9), curve(2, true, 0, 5, 9),
		curve(3, false, 0, 0),
	}
	cases := []struct {
		name  string
		m     Median
		trial Curve
		want  bool
	}{
		{"best 2.5 < median 3", Median{}, curve(9, false, 2.5, 2), true},
		{"best so far counts: 3.5 at step 1", Median{}, curve(9, false, 3.5, 2), false},
		{"equal to the median is kept", Median{}, curve(9, false, 1, 3), false},
		{"startup: 3 complete < 4", Median{StartupTrials: 4}, curve(9, false, 2.5, 2), false},
		{"startup: 3 complete ≥ 3", Median{StartupTrials: 3}, curve(9, false, 2.5, 2), true},
		{"warm-up: step 2 < 3", Median{WarmupSteps: 3}, curve(9, false, 2.5, 2), false},
		{"warm-up: step 2 ≥ 2", Median{WarmupSteps: 2}, curve(9, false, 2.5, 2), true},
		{"min trials: 3 reported step 2 < 4", Median{MinTrials: 4}, curve(9, false, 2.5, 2), false},
		{"no complete trial reported step 4", Median{}, curve(9, false, 0, 0, 0, 0), false},
		// Step 1: values 0, 0, 0 → median 0; -1 < 0.
		{"step 1", Median{}, curve(9, false, -1), true},
	}
	for _, c := range cases {
		if got := c.m.Prune(c.trial, history); got != c.want {
			t.Errorf("%s: Prune = %v, want %v", c.name, got, c.want)
		}
	}
	if (Median{}).Prune(curve(9, false, -100), nil) {
		t.Error("pruned with no history")
	}
	// Even count: 1, 3, 5, 7 → median 4.
	h4 := append(history[:3:3], curve(4, true, 0, 7))
	if !(Median{}).Prune(curve(9, false, 0, 3.9), h4) || (Median{}).Prune(curve(9, false, 0, 4), h4) {
		t.Error("median of an even count is not the mean of the middle two (4)")
	}
}

func TestASHAHandComputed(t *testing.T) {
	a := ASHA{MinStep: 1, Eta: 2}
	// Rungs at steps 1, 2, 4, 8. Values at rung 1: 0.1, 0.5, 0.9 (the
	// pruned trial 2 counts: it reached the rung).
	history := []Curve{curve(0, true, 0.1, 0.2, 0.3, 0.4), curve(1, true, 0.9, 1, 1, 1), curve(2, false, 0.5)}
	cases := []struct {
		name  string
		a     ASHA
		trial Curve
		want  bool
	}{
		// n = 4 values {0.1, 0.5, 0.9, v}, top ⌊4/2⌋ = 2 continue.
		{"0.6 is second of four", a, curve(9, false, 0.6), false},
		{"0.5 ties the second", a, curve(9, false, 0.5), false},
		{"0.4 is third of four", a, curve(9, false, 0.4), true},
		// Rung 2 (step 2): history values 0.2 and 1 → n = 3, top 1.
		{"rung 2: 0.3 is not the best of three", a, curve(9, false, 0.6, 0.3), true},
		{"rung 2: 1 ties the best", a, curve(9, false, 0.6, 1), false},
		// Step 3 is no rung: no decision, however bad.
		{"step 3 is between rungs", a, curve(9, false, 0.6, 1, -5), false},
		// Min step 2, η 3: rungs 2, 6; step 1 is before the first rung.
		{"before the first rung", ASHA{MinStep: 2, Eta: 3}, curve(9, false, -5), false},
		// Rate 1: rungs 2, 4, 8: rung 1 does not exist.
		{"rate 1 skips step 1", ASHA{MinStep: 1, Eta: 2, Rate: 1}, curve(9, false, 0.4), false},
		// Max step 2: rung 2 is the end, no decision there.
		{"no rung at the last step", ASHA{MinStep: 1, Eta: 2, MaxStep: 2}, curve(9, false, 0.6, 0.3), false},
		// Alone at a rung: the best of one continues.
		{"alone", a, curve(9, false, -5), false},
	}
	for _, c := range cases {
		var h []Curve
		if c.name != "alone" {
			h = history
		}
		if got := c.a.Prune(c.trial, h); got != c.want {
			t.Errorf("%s: Prune = %v, want %v", c.name, got, c.want)
		}
	}
	// A trial whose reports jump from step 1 over rungs 2 and 4 to step 5
	// is judged at both, with its step-5 value: at rung 2 {0.2, 1, 0.5} it
	// is not the best → stopped.
	jump := Curve{ID: 9, Points: []Point{{1, 0.95}, {5, 0.5}}}
	if !a.Prune(jump, history) {
		t.Error("a report past two rungs was not judged at them")
	}
}

func TestHyperbandBrackets(t *testing.T) {
	h := Hyperband{MinStep: 1, MaxStep: 9, Eta: 3}
	// s_max = ⌊log_3 9⌋ = 2; n = ⌈3/3·9⌉ = 9, ⌈3/2·3⌉ = 5, ⌈3/1·1⌉ = 3.
	got := h.brackets()
	if want := []int{9, 5, 3}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("brackets = %v, want %v", got, want)
	}
	for id, want := range map[int]int{0: 0, 8: 0, 9: 1, 13: 1, 14: 2, 16: 2, 17: 0, 26: 1} {
		if b := bracketOf(id, got); b != want {
			t.Errorf("bracketOf(%d) = %d, want %d", id, b, want)
		}
	}
	// Bracket 0 (rungs 1, 3): trial 1 competes with trials 0 and 2 only;
	// trial 9 (bracket 1) is not counted though it is better.
	history := []Curve{curve(0, true, 0.5), curve(2, true, 0.7), curve(9, true, 5)}
	if !h.Prune(curve(1, false, 0.6), history) {
		t.Error("bracket 0: 0.6 of {0.5, 0.6, 0.7} (top 1) was kept")
	}
	if h.Prune(curve(1, false, 0.8), history) {
		t.Error("bracket 0: the best of its bracket was stopped")
	}
	// Bracket 1's first rung is step 3: step 1 is never judged there.
	if h.Prune(curve(10, false, -9), []Curve{curve(11, true, 5)}) {
		t.Error("bracket 1 judged step 1")
	}
	// Bracket 2 runs to the end: its only rung would be step 9 = MaxStep.
	if h.Prune(curve(14, false, -9, -9, -9, -9, -9, -9, -9, -9, -9), []Curve{curve(15, true, 5, 5, 5, 5, 5, 5, 5, 5, 5)}) {
		t.Error("bracket 2 stopped a trial")
	}
}
