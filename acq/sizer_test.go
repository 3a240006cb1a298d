package acq

import (
	"math"
	"testing"
)

func TestGainRuleWorth(t *testing.T) {
	r := GainRule{}.WithDefaults() // 0.02 nats, 5%
	for _, c := range []struct {
		prev, next float64
		want       bool
	}{
		{0, 0.02, true},    // the absolute threshold, met
		{0, 0.019, false},  // below it
		{1, 1.049, false},  // above 0.02 nats but below 5% of 1
		{1, 1.05, true},    // 5% of 1
		{0.1, 0.125, true}, // 5% of 0.1 is below 0.02 nats: the absolute rules
		{0.5, 0.45, false}, // α went down
	} {
		if got := r.Worth(c.prev, c.next); got != c.want {
			t.Errorf("Worth(%v, %v) = %v, want %v", c.prev, c.next, got, c.want)
		}
	}
	none := GainRule{MinGain: -1, RelGain: -1}.WithDefaults()
	if !none.Worth(1, 1) || none.Worth(1, 0.99) {
		t.Error("without thresholds a point is worth it unless α goes down")
	}
	if (GainRule{MinGain: math.NaN()}).Validate() == nil || (GainRule{RelGain: math.Inf(1)}).Validate() == nil {
		t.Error("non-finite thresholds accepted")
	}
}
