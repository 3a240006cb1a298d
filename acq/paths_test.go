package acq

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestPathSearchWorkers checks that the registered path-based acquisitions
// hand Options.Optimize.Workers to their sample-path searches, and that a
// worker count alone keeps PathMaxima's path defaults (the same result as
// the zero settings, which would not hold with the 512-sample, 10-restart
// acquisition defaults).
func TestPathSearchWorkers(t *testing.T) {
	o := Options{Optimize: OptimizeSettings{Workers: 1}}
	settings := map[string]func(Proposer) OptimizeSettings{
		"mes": func(p Proposer) OptimizeSettings { return p.(Greedy).Scorer.(mes).Settings },
		"pes": func(p Proposer) OptimizeSettings { return p.(Greedy).Scorer.(pes).Settings },
		"ts":  func(p Proposer) OptimizeSettings { return p.(thompson).Settings },
	}
	for name, get := range settings {
		p, err := Lookup(name, o)
		if err != nil {
			t.Fatal(err)
		}
		if got := get(p); !reflect.DeepEqual(got, OptimizeSettings{Workers: 1}) {
			t.Errorf("%s: path search settings %+v, want only Workers = 1", name, got)
		}
	}

	g := fixtureGP(t, 12, 2, 8)
	run := func(s OptimizeSettings) (*mat.Dense, []float64) {
		X, v, err := pathMaxima(context.Background(), g, 3, 200, s, rand.New(rand.NewPCG(4, 4)))
		if err != nil {
			t.Fatal(err)
		}
		return X, v
	}
	X0, v0 := run(OptimizeSettings{})
	for _, w := range []int{1, 3} {
		X, v := run(OptimizeSettings{Workers: w})
		if !mat.Equal(X, X0) {
			t.Errorf("workers=%d: maximizers %v, zero settings give %v", w, mat.Formatted(X), mat.Formatted(X0))
		}
		for k := range v {
			if v[k] != v0[k] {
				t.Errorf("workers=%d: maximum %d is %v, zero settings give %v", w, k, v[k], v0[k])
			}
		}
	}
}
