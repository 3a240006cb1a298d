package main

import (
	"strings"
	"testing"
	"time"
)

// A budget in seconds beyond a Duration's range, NaN or infinite is
// refused as such (1e10 was called "-2562047h47m16s is not positive").
func TestParseDurationOverflow(t *testing.T) {
	for _, v := range []string{"1e10", "NaN", "Inf", "-3"} {
		if _, err := parseDuration(v); err == nil || !strings.Contains(err.Error(), "is not a positive duration below") {
			t.Errorf("%s: %v", v, err)
		}
	}
	if d, err := parseDuration("1.5"); err != nil || d != 1500*time.Millisecond {
		t.Errorf("1.5: %v, %v", d, err)
	}
}
