package bench

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// FuzzParseProblem: ParseProblem never panics, and a problem it accepts
// has a name and no seed key, and formats back to a spec that parses to
// the same problem.
func FuzzParseProblem(f *testing.F) {
	for _, s := range []string{
		"synthetic/branin", "synthetic/gpsample:dim=3:sample_seed=7", " x : a = 1 ", "p:noise_var=0",
		"p:noise_var=-1", "p:seed=1", "p:a=1:a=2", ":", "p:=", "p:k", "p:noise_var=NaN",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := ParseProblem(spec)
		if err != nil {
			return
		}
		if p.Name == "" || strings.Contains(p.Name, ":") {
			t.Fatalf("%q: accepted name %q", spec, p.Name)
		}
		if _, ok := p.Params["seed"]; ok {
			t.Fatalf("%q: accepted the reserved seed", spec)
		}
		parts := []string{p.Name}
		for _, k := range slices.Sorted(maps.Keys(p.Params)) {
			parts = append(parts, k+"="+p.Params[k])
		}
		q, err := ParseProblem(strings.Join(parts, ":"))
		if err != nil || q.Name != p.Name || !maps.Equal(q.Params, p.Params) {
			t.Fatalf("%q → %+v; formatted back: %+v, %v", spec, p, q, err)
		}
	})
}

// FuzzParseParams: ParseParams never panics, refuses the reserved keys,
// and keeps one key per accepted pair.
func FuzzParseParams(f *testing.F) {
	f.Add("dim=3", "sample_seed=2")
	f.Add("noise_var=0", "a=b")
	f.Add("seed=1", "")
	f.Add("k=1", "k=1")
	f.Add("=", " = ")
	f.Fuzz(func(t *testing.T, a, b string) {
		m, err := ParseParams([]string{a, b})
		if err != nil {
			return
		}
		if len(m) != 2 {
			t.Fatalf("%q, %q gave %v", a, b, m)
		}
		for k := range m {
			if k == "" || k == KeyNoiseVar || k == "seed" {
				t.Fatalf("accepted key %q", k)
			}
		}
	})
}
