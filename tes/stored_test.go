package tes

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// StoredMaximizers reads back what CarriedState stored.
func TestStoredMaximizers(t *testing.T) {
	var s scorer
	want := [][]float64{{0.1, 0.2}, {0.7, 0.9}, {0.5, 0.5}}
	s.prev = mat.NewDense(3, 2, slices.Concat(want...))
	state, err := s.carriedState()
	if err != nil {
		t.Fatal(err)
	}
	got, err := StoredMaximizers(state)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, want, slices.Equal[[]float64]) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got, err := StoredMaximizers(nil); got != nil || err != nil {
		t.Fatalf("empty state: %v, %v", got, err)
	}
	for _, bad := range []string{`{"xstar":[[0.1],[0.2,0.3]]}`, `not json`} {
		if _, err := StoredMaximizers([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
