// Package pause notices when this process did not run for a while: stopped
// by SIGSTOP or Ctrl-Z and continued, or its machine suspended. A deadline
// measured on the wall clock passes during such a pause although nothing
// it bounds was slow: an evaluation whose answer was waiting in the socket
// when the process continued looks timed out. Callers that enforce
// deadlines ask Since how much of an interval was a pause, and give the
// work another chance instead of failing it.
package pause

import (
	"sync"
	"time"
)

// tick is how often the watcher runs; a gap between two of its runs of
// more than minGap counts as a pause. A loaded machine delays a goroutine
// by milliseconds, rarely by a second.
const (
	tick   = 100 * time.Millisecond
	minGap = time.Second
	// keep bounds the pauses remembered (the oldest are dropped).
	keep = 64
)

type gap struct{ from, to time.Time }

var (
	once   sync.Once
	mu     sync.Mutex
	last   time.Time
	pauses []gap
)

// Watch starts the watcher (once per process; Since calls it too). Call it
// before the intervals Since will be asked about begin.
func Watch() {
	once.Do(func() {
		mu.Lock()
		last = time.Now()
		mu.Unlock()
		go watch()
	})
}

func watch() {
	t := time.NewTicker(tick)
	defer t.Stop()
	for range t.C {
		record(time.Now())
	}
}

// record notes a run of the watcher at now.
func record(now time.Time) {
	mu.Lock()
	defer mu.Unlock()
	if now.Sub(last) > minGap {
		pauses = append(pauses, gap{last, now})
		if len(pauses) > keep {
			pauses = pauses[len(pauses)-keep:]
		}
	}
	last = now
}

// Since returns how much of the time from t until now the process was
// paused. A pause the watcher has not run since (the caller woke first
// when the process continued) counts from the watcher's last run.
func Since(t time.Time) time.Duration {
	Watch()
	now := time.Now()
	mu.Lock()
	defer mu.Unlock()
	gs := pauses
	if now.Sub(last) > minGap {
		gs = append(gs[:len(gs):len(gs)], gap{last, now})
	}
	var d time.Duration
	for _, g := range gs {
		if g.to.After(t) {
			from := g.from
			if from.Before(t) {
				from = t
			}
			d += g.to.Sub(from)
		}
	}
	return d
}

// Explains reports whether a deadline of limit for work started at t
// passed only because of a pause: without the paused time, less than
// limit has elapsed.
func Explains(t time.Time, limit time.Duration) bool {
	if limit <= 0 {
		return false
	}
	p := Since(t)
	return p > 0 && time.Since(t)-p < limit
}
