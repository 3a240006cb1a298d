package testfunc

import (
	"strings"
	"testing"
)

func TestNewBuildsEveryName(t *testing.T) {
	dir := t.TempDir()
	syntheticLog10P().write(t, dir)
	for _, name := range Names() {
		s := Settings{}
		if name == "log10p" {
			s.DataDir = dir
		}
		fn, err := New(name, s)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if fn.Name != name {
			t.Errorf("New(%q).Name = %q", name, fn.Name)
		}
		if AnyDim(name) && fn.Dim != DefaultDim {
			t.Errorf("%s: default dimension %d, want %d", name, fn.Dim, DefaultDim)
		}
		if fn.NoiseVar <= 0 {
			t.Errorf("%s: NoiseVar %g", name, fn.NoiseVar)
		}
	}
	if len(Names()) != 12 {
		t.Errorf("%d names, want 12: %v", len(Names()), Names())
	}
	fn, err := New("michalewicz", Settings{Dim: 7})
	if err != nil || fn.Dim != 7 {
		t.Errorf("michalewicz dim 7: %v, %v", fn, err)
	}
	if fn, err := New("hartmann6", Settings{Dim: 6}); err != nil || fn.Dim != 6 {
		t.Errorf("hartmann6 with its own dim: %v", err)
	}
	a, _ := New("gpsample", Settings{SampleSeed: 5})
	b := GPSample(5)
	if a.Optimum != b.Optimum {
		t.Error("SampleSeed does not select the draw")
	}
}

func TestNewRejectsBadSettings(t *testing.T) {
	cases := []struct {
		name string
		s    Settings
		want string
	}{
		{"nosuch", Settings{}, "unknown"},
		{"branin", Settings{Dim: 3}, "2-dimensional"},
		{"ackley", Settings{Dim: -2}, "dimension"},
		{"rosenbrock", Settings{Dim: 1}, "dimension"},
		{"branin", Settings{SampleSeed: 3}, "gpsample"},
		{"hartmann3", Settings{DataDir: "/tmp"}, "log10p"},
		{"log10p", Settings{}, "data"},
		{"log10p", Settings{DataDir: "/nonexistent/dir"}, "no such file"},
	}
	for _, c := range cases {
		_, err := New(c.name, c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %+v): %v, want an error mentioning %q", c.name, c.s, err, c.want)
		}
	}
}
