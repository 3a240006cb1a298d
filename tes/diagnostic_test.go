package tes

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tesbo/tesbo/acq"
)

// TestBatchSizeDiagnostic: the maximized α grows with B (within the
// estimator's error), stays below H(x*), and the gain per point falls.
func TestBatchSizeDiagnostic(t *testing.T) {
	g := toyGP(t, 81, 10, 2, 0.3, 1e-3)
	st := &acq.State{GP: g, Rand: rand.New(rand.NewPCG(81, 82)), Iter: 1}
	rows, m, err := BatchSizeDiagnostic(context.Background(), st, 4, Settings{Trusted: 4}, acq.OptimizeSettings{})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Entropy()
	for i, r := range rows {
		t.Logf("B=%d: α* = %.4f ± %.4f (per point %.4f), H(x*) = %.4f", r.B, r.Alpha, r.SE, r.PerPoint, h)
		if r.Alpha > h+1e-9 || r.Alpha < 0 {
			t.Errorf("B=%d: α* = %g outside [0, H]", r.B, r.Alpha)
		}
		if i > 0 {
			p := rows[i-1]
			if r.Alpha < p.Alpha-3*math.Hypot(r.SE, p.SE)-1e-6 {
				t.Errorf("α* decreased from B=%d (%.4f) to B=%d (%.4f)", p.B, p.Alpha, r.B, r.Alpha)
			}
		}
	}
	if rows[len(rows)-1].PerPoint > rows[0].PerPoint {
		t.Errorf("information per evaluation grew with B: %.4f → %.4f", rows[0].PerPoint, rows[len(rows)-1].PerPoint)
	}
}
