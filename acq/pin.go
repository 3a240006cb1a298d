package acq

import (
	"fmt"
	"math"
)

// Pinned coordinates (fixed parameters). A pin vector has one entry per
// coordinate of the unit cube: the value every point of a proposed batch
// must take there, or NaN for a free coordinate. The inner optimizer
// maximizes the acquisition over the free coordinates only: the raw
// samples and the starts carry the pinned values, the local searches never
// move them (their gradient is masked, as for categorical coordinates),
// a pinned categorical takes no part in the search over choices, and the
// result carries them exactly. The GP itself is unchanged: it is fitted on
// every observation, wherever its pinned coordinates lie, so the pins
// restrict where the acquisition looks, not what the model knows.

// Pin returns o with the restrictions of s's search: its pins
// (State.Pinned) and its canonical map (State.Canonical). It is what an
// acquisition passes to MaximizeMixed so that its batch honours them.
func (s *State) Pin(o OptimizeSettings) OptimizeSettings {
	o.Pinned, o.Canonical = s.Pinned, s.Canonical
	return o
}

// checkPins validates a pin vector against the dimension d.
func checkPins(pin []float64, d int) error {
	if pin == nil {
		return nil
	}
	if len(pin) != d {
		return fmt.Errorf("maximize: %d pinned coordinates for dimension %d", len(pin), d)
	}
	for j, v := range pin {
		if !math.IsNaN(v) && !(v >= 0 && v <= 1) {
			return fmt.Errorf("maximize: coordinate %d pinned at %v, outside [0, 1]", j, v)
		}
	}
	return nil
}

// applyPins sets the pinned coordinates of every point of the flat batch
// x (q·d, q = len(x)/d).
func applyPins(x, pin []float64) {
	d := len(pin)
	if d == 0 {
		return
	}
	for r := 0; r+d <= len(x); r += d {
		for j, v := range pin {
			if !math.IsNaN(v) {
				x[r+j] = v
			}
		}
	}
}

// freeCategories returns cats without the pinned coordinates (they take no
// part in the search over choices); cats itself when nothing is pinned.
func freeCategories(cats []int, pin []float64) []int {
	if cats == nil || pin == nil {
		return cats
	}
	out := append([]int(nil), cats...)
	for j, v := range pin {
		if !math.IsNaN(v) {
			out[j] = 0
		}
	}
	return out
}

// pinMask returns the flat (q·d) mask of coordinates the local search must
// not move: the categorical ones (fixed, or nil) and the pinned ones.
func pinMask(fixed []bool, pin []float64, q int) []bool {
	if pin == nil {
		return fixed
	}
	d := len(pin)
	out := make([]bool, q*d)
	copy(out, fixed)
	for r := 0; r < q; r++ {
		for j, v := range pin {
			if !math.IsNaN(v) {
				out[r*d+j] = true
			}
		}
	}
	return out
}
