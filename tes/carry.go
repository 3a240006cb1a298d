package tes

import (
	"encoding/json"
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// carried is what TES carries between iterations: the last iteration's
// trusted maximizers X*, candidate starts of the next search for X*
// (trustedMaximizers). Storing it is what keeps a resumed study bitwise
// identical to an uninterrupted one.
type carried struct {
	XStar [][]float64 `json:"xstar"`
}

// carriedState implements acq.Carrier: the X* of the latest Prepare as JSON,
// nil before the first.
func (s *scorer) carriedState() ([]byte, error) {
	s.mu.Lock()
	prev := s.prev
	s.mu.Unlock()
	if prev == nil {
		return nil, nil
	}
	r, _ := prev.Dims()
	c := carried{XStar: make([][]float64, r)}
	for i := range r {
		c.XStar[i] = append([]float64(nil), prev.RawRowView(i)...)
	}
	return json.Marshal(c)
}

// restoreState implements acq.Carrier: the next Prepare starts its search for
// X* from the stored maximizers, as it would have in the process that stored
// them. An empty state clears them.
func (s *scorer) restoreState(state []byte) error {
	var prev *mat.Dense
	if len(state) > 0 {
		var c carried
		if err := json.Unmarshal(state, &c); err != nil {
			return fmt.Errorf("tes: restore carried state: %w", err)
		}
		if len(c.XStar) > 0 {
			d := len(c.XStar[0])
			prev = mat.NewDense(len(c.XStar), d, nil)
			for i, row := range c.XStar {
				if len(row) != d {
					return fmt.Errorf("tes: restore carried state: row %d has %d coordinates, want %d", i, len(row), d)
				}
				prev.SetRow(i, row)
			}
		}
	}
	s.mu.Lock()
	s.prev, s.last = prev, nil
	s.mu.Unlock()
	return nil
}

// CarriedState implements acq.Carrier (see Scorer.CarriedState).
func (p *proposer) CarriedState() ([]byte, error) { return p.Scorer.carriedState() }

// RestoreState implements acq.Carrier (see Scorer.RestoreState).
func (p *proposer) RestoreState(state []byte) error { return p.Scorer.restoreState(state) }
