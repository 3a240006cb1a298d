package tes

import (
	"encoding/json"
	"fmt"
)

// StoredMaximizers implements acq.MaximizerCarrier: the trusted maximizers
// X* (rows, unit-cube coordinates) of a state that CarriedState returned
// and a study stored with its iteration, the X* of that iteration's
// Prepare. An empty state, or one without maximizers, gives none.
func (p *proposer) StoredMaximizers(state []byte) ([][]float64, error) {
	return storedMaximizers(state)
}

// StoredMaximizers implements acq.MaximizerCarrier (see
// Proposer.StoredMaximizers): Deliver carries TES's state.
func (p *Deliver) StoredMaximizers(state []byte) ([][]float64, error) {
	return storedMaximizers(state)
}

// storedMaximizers decodes the X* of a carried state.
func storedMaximizers(state []byte) ([][]float64, error) {
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
