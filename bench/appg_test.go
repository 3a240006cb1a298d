package bench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// TestBatchCurve checks the Appendix G diagnostic's invariants on Branin:
// α is an information gain about x* ∈ X*, so 0 ≤ α ≤ H(x*); a larger batch
// can repeat a smaller one's points, so the maximized α must not drop by
// more than the Monte-Carlo error when |B| grows. The reported α is the
// fresh-sample re-estimate of tes.Model.BatchGains: equal to the
// optimization's own value where TES_ep uses quadrature (|B| ≤ 2), a
// different estimate with a positive standard error where it uses Monte
// Carlo (|B| = 4).
func TestBatchCurve(t *testing.T) {
	s := Suite{
		Problems: []Problem{{Name: "synthetic/branin"}},
		Batches:  []int{1, 2, 4},
		Init:     8,
		Seeds:    1,
		Out:      t.TempDir(),
	}
	pts, err := BatchCurve(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 {
		t.Fatalf("%d points, want 3", len(pts))
	}
	for i, p := range pts {
		t.Logf("|B| = %d: α = %.4f ± %.4f (optimization's own estimate %.4f), H = %.4f, %.2fs",
			p.Batch, p.Alpha, p.AlphaSE, p.Fitted, p.Entropy, p.Seconds)
		if quad := p.Batch <= 2; quad && (p.AlphaSE != 0 || p.Alpha != p.Fitted) {
			t.Errorf("|B| = %d (quadrature): α = %v ± %v, optimization's %v; want equal, SE 0", p.Batch, p.Alpha, p.AlphaSE, p.Fitted)
		} else if !quad && (!(p.AlphaSE > 0) || p.Alpha == p.Fitted) {
			t.Errorf("|B| = %d (Monte Carlo): α = %v ± %v is not a fresh re-estimate (optimization's %v)", p.Batch, p.Alpha, p.AlphaSE, p.Fitted)
		}
		if p.Alpha < -3*p.AlphaSE-1e-9 || p.Alpha > p.Entropy+3*p.AlphaSE+1e-6 {
			t.Errorf("|B| = %d: α = %v outside [0, H(x*) = %v] (SE %v)", p.Batch, p.Alpha, p.Entropy, p.AlphaSE)
		}
		if i > 0 {
			prev := pts[i-1]
			if tol := 3*(p.AlphaSE+prev.AlphaSE) + 0.02*prev.Alpha; p.Alpha < prev.Alpha-tol {
				t.Errorf("α dropped from %v (|B| = %d) to %v (|B| = %d)", prev.Alpha, prev.Batch, p.Alpha, p.Batch)
			}
		}
	}
	testenv.CheckPNG(t, filepath.Join(s.Out, "appg_synthetic-branin.png"))
	md, err := os.ReadFile(filepath.Join(s.Out, BatchCurveSummary))
	if err != nil || !strings.Contains(string(md), "| 4 | 1 |") {
		t.Errorf("appg.md: %v\n%s", err, md)
	}
}
