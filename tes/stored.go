package tes

import (
	"encoding/json"
	"fmt"
)

// StoredMaximizers decodes the trusted maximizers X* (rows, unit-cube
// coordinates) from a state that CarriedState returned and a study stored
// with its iteration: the X* of that iteration's Prepare. An empty state,
// or one without maximizers, gives none.
func StoredMaximizers(state []byte) ([][]float64, error) {
	if len(state) == 0 {
		return nil, nil
	}
	var c carried
	if err := json.Unmarshal(state, &c); err != nil {
		return nil, fmt.Errorf("tes: stored maximizers: %w", err)
	}
	for i, row := range c.XStar {
		if len(row) != len(c.XStar[0]) {
			return nil, fmt.Errorf("tes: stored maximizers: row %d has %d coordinates, want %d", i, len(row), len(c.XStar[0]))
		}
	}
	return c.XStar, nil
}
