package problems

import (
	"context"
	"strings"
	"testing"
)

// New opens a problem of every family by its full name and refuses others;
// Served holds synthetic/* and user/* (what the plugin serves) but not the
// mixed suite.
func TestNewAndServed(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"synthetic/branin", "user/bumps2", "mixed/func2c", "mixed/func2c-onehot"} {
		o, err := New(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := o.Info(ctx); err != nil {
			t.Errorf("%s: Info: %v", name, err)
		}
	}
	for name, want := range map[string]string{
		"branin":           "unknown problem \"branin\"",
		"synthetic/nope":   "problem synthetic/nope: unknown synthetic objective",
		"user/nope":        "nope",
		"other/func2c":     "the built-in problems are synthetic/<name>",
		"mixed/nope":       "nope",
		"synthetic/":       "problem synthetic/:",
		"user/bumps2extra": "bumps2extra",
		"cond/nope":        "the conditional problems are",
		"curve/nope":       "nope",
		"mf/nope":          "mf/augmented-branin",
	} {
		if _, err := New(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(%q): error %v, want one containing %q", name, err, want)
		}
	}
	served := Served()
	for _, name := range []string{"synthetic/branin", "synthetic/bbob-f1", "user/bumps2", "curve/cross2", "cond/branches", "cond/branches-flat", "cond/hartmann", "cond/hartmann-flat", "mf/augmented-branin", "mf/augmented-hartmann"} {
		if served[name] == nil {
			t.Errorf("Served lacks %s", name)
		}
	}
	for name := range served {
		if !strings.HasPrefix(name, "synthetic/") && !strings.HasPrefix(name, "user/") && !strings.HasPrefix(name, "curve/") && !strings.HasPrefix(name, "cond/") && !strings.HasPrefix(name, "mf/") {
			t.Errorf("Served holds %s: the plugin serves synthetic/*, user/*, curve/*, mf/* and cond/* only", name)
		}
	}
}
