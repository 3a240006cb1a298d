package loader

import (
	"fmt"
	"sync"
	"time"
)

// What a plugin writes is re-logged, but a plugin printing in a loop
// (560,000 lines in one fault run) must not flood the host's log: each
// stream of a plugin (stdout, stderr, its hclog records; over all its
// processes, restarts included) may log
// logBurst lines at once and logRate lines a second after that; the lines
// over the rate are counted and reported in one summary line (at the next
// line let through, or logSummaryAfter after the first one dropped,
// whichever comes first). Each line is cut to maxLogLine bytes.
const (
	logBurst        = 200
	logRate         = 50
	logSummaryAfter = time.Second
	maxLogLine      = 4096
)

// logLimiter is a token bucket of log lines, safe for concurrent use,
// that counts the lines it refuses and has them summarized: at the next
// line it admits, or logSummaryAfter after the first refused one.
type logLimiter struct {
	mu          sync.Mutex
	rate, burst float64
	tokens      float64
	last        time.Time
	suppressed  int
	timer       *time.Timer
	after       time.Duration    // logSummaryAfter; tests change it
	now         func() time.Time // time.Now; tests replace it
	summarize   func(n int)      // logs that n lines were suppressed
}

func newLogLimiter(summarize func(n int)) *logLimiter {
	return &logLimiter{rate: logRate, burst: logBurst, tokens: logBurst, after: logSummaryAfter, now: time.Now, summarize: summarize}
}

// admit reports whether one more line may be logged now; before it is,
// the lines suppressed until now are summarized.
func (l *logLimiter) admit() bool {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		if l.timer == nil {
			l.timer = time.AfterFunc(l.after, l.flush)
		}
		l.mu.Unlock()
		return false
	}
	l.tokens--
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if n > 0 {
		l.summarize(n)
	}
	return true
}

// flush summarizes the lines suppressed so far.
func (l *logLimiter) flush() {
	l.mu.Lock()
	l.timer = nil
	n := l.suppressed
	l.suppressed = 0
	l.mu.Unlock()
	if n > 0 {
		l.summarize(n)
	}
}

// suppressedLine is the summary logged in place of n dropped lines.
func suppressedLine(n int) string {
	return fmt.Sprintf("… %d lines suppressed (more than %d lines/s)", n, logRate)
}
