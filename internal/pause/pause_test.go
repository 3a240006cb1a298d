package pause

import (
	"testing"
	"time"
)

// A gap between the watcher's runs longer than minGap counts as a pause,
// clipped to the interval asked about; shorter gaps do not count.
func TestSince(t *testing.T) {
	mu.Lock()
	saved, savedLast := pauses, last
	pauses, last = nil, time.Time{}
	mu.Unlock()
	defer func() {
		mu.Lock()
		pauses, last = saved, savedLast
		mu.Unlock()
	}()
	t0 := time.Now().Add(-time.Minute)
	record(t0)
	record(t0.Add(500 * time.Millisecond))                // a delay, not a pause
	record(t0.Add(500*time.Millisecond + 12*time.Second)) // a 12 s pause
	record(t0.Add(13 * time.Second))
	mu.Lock()
	last = time.Now() // the watcher has just run: no pause under way
	mu.Unlock()
	if got := Since(t0); got != 12*time.Second {
		t.Fatalf("Since(t0) = %v, want the 12 s pause", got)
	}
	if got := Since(t0.Add(6*time.Second + 500*time.Millisecond)); got != 6*time.Second {
		t.Fatalf("Since(mid-pause) = %v, want its last 6 s", got)
	}
	if got := Since(t0.Add(20 * time.Second)); got != 0 {
		t.Fatalf("Since(after) = %v, want 0", got)
	}
	// From t0, about 60 s have elapsed, 12 of them paused: 48 s of running.
	if !Explains(t0, 50*time.Second) {
		t.Error("a 50 s limit from t0 passed only because of the pause, Explains says no")
	}
	if Explains(t0, 40*time.Second) || Explains(t0.Add(20*time.Second), 100*time.Second) || Explains(t0, 0) {
		t.Error("Explains a limit the running time passed, one with no pause in it, or no limit")
	}
}

// A pause the watcher has not yet seen (the caller woke first when the
// process continued) counts from the watcher's last run.
func TestSinceUnderWay(t *testing.T) {
	mu.Lock()
	saved, savedLast := pauses, last
	pauses, last = nil, time.Now().Add(-5*time.Second)
	mu.Unlock()
	defer func() {
		mu.Lock()
		pauses, last = saved, savedLast
		mu.Unlock()
	}()
	if got := Since(time.Now().Add(-3 * time.Second)); got < 3*time.Second || got > 4*time.Second {
		t.Fatalf("Since = %v, want the last 3 s of a pause under way", got)
	}
}
