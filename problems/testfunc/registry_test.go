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
		wantDim := defaultDim
		if name == "powell" {
			wantDim = 4 // blocks of four coordinates
		}
		if AnyDim(name) && fn.Dim != wantDim {
			t.Errorf("%s: default dimension %d, want %d", name, fn.Dim, wantDim)
		}
		if fn.NoiseVar <= 0 {
			t.Errorf("%s: NoiseVar %g", name, fn.NoiseVar)
		}
	}
	if len(Names()) != 48 {
		t.Errorf("%d names, want 48 (12 classics, 12 more of BoTorch's, 24 BBOB): %v", len(Names()), Names())
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
		{"branin", Settings{Instance: 2}, "BBOB"},
		{"rastrigin", Settings{Instance: 1}, "BBOB"},
		{"bbob-f3", Settings{Instance: -1}, "instance"},
		{"bbob-f3", Settings{SampleSeed: 1}, "gpsample"},
		{"bbob-f1", Settings{Dim: 1}, "dimension"},
		{"bbob-f1", Settings{Dim: 101}, "dimension"},
		{"powell", Settings{Dim: 6}, "multiple of 4"},
		{"shekel", Settings{Dim: 2}, "4-dimensional"},
	}
	for _, c := range cases {
		_, err := New(c.name, c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %+v): %v, want an error mentioning %q", c.name, c.s, err, c.want)
		}
	}
}

// Settings.Instance selects the BBOB instance; 0 is instance 1.
func TestNewBBOBInstances(t *testing.T) {
	def, err := New("bbob-f15", Settings{Dim: 5})
	if err != nil {
		t.Fatal(err)
	}
	one, _ := BBOB(15, 5, 1)
	three, _ := New("bbob-f15", Settings{Dim: 5, Instance: 3})
	want3, _ := BBOB(15, 5, 3)
	if def.Name != "bbob-f15" || def.Dim != 5 || def.Optimum != one.Optimum || def.Maximizers[0][0] != one.Maximizers[0][0] {
		t.Errorf("instance 0 is not instance 1: %v vs %v", def.Maximizers, one.Maximizers)
	}
	if three.Optimum != want3.Optimum || three.Maximizers[0][0] != want3.Maximizers[0][0] || three.Optimum == one.Optimum {
		t.Errorf("instance 3: f* %g (BBOB gives %g, instance 1 %g)", three.Optimum, want3.Optimum, one.Optimum)
	}
	for _, n := range Names() {
		if HasInstances(n) != strings.HasPrefix(n, "bbob-f") {
			t.Errorf("HasInstances(%q) = %v", n, HasInstances(n))
		}
	}
	if HasInstances("bbob-f25") {
		t.Error("HasInstances(bbob-f25) = true")
	}
}
