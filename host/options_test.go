package host

import (
	"regexp"
	"testing"
	"time"
)

// Default names of studies started in the same second differ, and keep
// the objective-timestamp prefix.
func TestDefaultStudyNameUnique(t *testing.T) {
	now := time.Date(2026, 11, 24, 18, 15, 16, 0, time.UTC)
	a, b := DefaultStudyName("synthetic/branin", now), DefaultStudyName("synthetic/branin", now)
	if a == b {
		t.Fatalf("two studies started in the same second are both named %q", a)
	}
	if !regexp.MustCompile(`^synthetic/branin-20261124-181516-[0-9a-f]{6}$`).MatchString(a) {
		t.Fatalf("name %q", a)
	}
}
