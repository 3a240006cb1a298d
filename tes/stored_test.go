package tes

import (
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// StoredMaximizers reads back what CarriedState stored, for both TES
// acquisitions that carry state.
func TestStoredMaximizers(t *testing.T) {
	var s scorer
	want := [][]float64{{0.1, 0.2}, {0.7, 0.9}, {0.5, 0.5}}
	s.prev = mat.NewDense(3, 2, slices.Concat(want...))
	state, err := s.carriedState()
	if err != nil {
		t.Fatal(err)
	}
	for _, mc := range []acq.MaximizerCarrier{&proposer{Scorer: &scorer{}}, &Deliver{TES: &proposer{Scorer: &scorer{}}}} {
		got, err := mc.StoredMaximizers(state)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, slices.Equal[[]float64]) {
			t.Fatalf("%T: got %v, want %v", mc, got, want)
		}
		if got, err := mc.StoredMaximizers(nil); got != nil || err != nil {
			t.Fatalf("%T: empty state: %v, %v", mc, got, err)
		}
		for _, bad := range []string{`{"xstar":[[0.1],[0.2,0.3]]}`, `not json`} {
			if _, err := mc.StoredMaximizers([]byte(bad)); err == nil {
				t.Errorf("%T: %s: no error", mc, bad)
			}
		}
	}
}
