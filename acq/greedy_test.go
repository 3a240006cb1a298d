package acq

import (
	"context"
	"math"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
)

// recordScorer wraps a Scorer and records the GP each Prepare call sees,
// i.e. the posterior Greedy conditioned on its fantasized observations.
type recordScorer struct {
	inner Scorer
	seen  []*gp.GP
}

func (r *recordScorer) Prepare(ctx context.Context, s *State, q int) (Func, error) {
	r.seen = append(r.seen, s.GP)
	return r.inner.Prepare(ctx, s, q)
}

// TestGreedyLies runs qei-cl (lie min, mean, max) and bucb (believer), built
// by Lookup, with one pending point and checks the observations the
// acquisition sees before each pick: the real data unchanged, then the
// pending point and the batch members chosen so far as inputs, each with
// the lie as its fantasized y. The constant lies are the min, mean and max
// of the real observations; the believer's is the posterior mean, at the
// point, of the GP it conditions.
func TestGreedyLies(t *testing.T) {
	const q = 3
	for _, c := range []struct {
		name string
		lie  lieKind
	}{{"qei-cl", lieMin}, {"qei-cl", lieMean}, {"qei-cl", LieMax}, {"bucb", LieBeliever}} {
		t.Run(c.name+"/"+c.lie.String(), func(t *testing.T) {
			p, err := Lookup(c.name, Options{Lie: c.lie, Optimize: OptimizeSettings{RawSamples: 64, Restarts: 2, Workers: 1}})
			if err != nil {
				t.Fatal(err)
			}
			g := p.(Greedy)
			if g.Lie != c.lie {
				t.Fatalf("%s built with lie %v, want %v", c.name, g.Lie, c.lie)
			}
			rec := &recordScorer{inner: g.Scorer}
			g.Scorer = rec
			s := testState(t, 10, 2, 12)
			s.Pending = mat.NewDense(1, 2, []float64{0.3, 0.9})
			B, err := g.Propose(context.Background(), s, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.seen) != q {
				t.Fatalf("Prepare called %d times for a batch of %d", len(rec.seen), q)
			}
			y0 := s.GP.Y()
			n := len(y0)
			lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
			for _, y := range y0 {
				lo, hi, mean = math.Min(lo, y), math.Max(hi, y), mean+y
			}
			mean /= float64(n)
			constant := map[lieKind]float64{lieMin: lo, lieMean: mean, LieMax: hi}[c.lie]

			// fantasized[k] is the k-th fantasized input: the pending
			// point, then the batch rows in order.
			fantasized := [][]float64{s.Pending.RawRowView(0)}
			for j := 0; j < q; j++ {
				fantasized = append(fantasized, B.RawRowView(j))
			}
			for j, gj := range rec.seen {
				if gj.N() != n+1+j {
					t.Fatalf("pick %d: GP has %d observations, want %d real + %d fantasized", j+1, gj.N(), n, 1+j)
				}
				for i := 0; i < n; i++ {
					if gj.Y()[i] != y0[i] {
						t.Errorf("pick %d: real observation %d changed from %v to %v", j+1, i, y0[i], gj.Y()[i])
					}
				}
				for k := 0; k <= j; k++ {
					if !mat.Equal(mat.NewDense(1, 2, gj.X().RawRowView(n+k)), mat.NewDense(1, 2, fantasized[k])) {
						t.Errorf("pick %d: fantasized input %d is %v, want %v", j+1, k, gj.X().RawRowView(n+k), fantasized[k])
					}
					want := constant
					if c.lie == LieBeliever {
						// Conditioned by the GP one fantasy earlier (the
						// original one for the pending point).
						prev := s.GP
						if k > 0 {
							prev = rec.seen[k-1]
						}
						want, _ = prev.MeanVar(fantasized[k])
					}
					if got := gj.Y()[n+k]; math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
						t.Errorf("pick %d: fantasized y %d = %v, want the %v lie %v", j+1, k, got, c.lie, want)
					}
				}
			}
		})
	}
	if _, err := Lookup("qei-cl", Options{Lie: LieBeliever}); err == nil {
		t.Error("qei-cl accepted the believer lie, which is not a constant lie")
	}
}

func TestParseLie(t *testing.T) {
	for _, l := range []lieKind{lieMin, lieMean, LieMax, LieBeliever} {
		got, err := parseLie(l.String())
		if err != nil || got != l {
			t.Errorf("ParseLie(%q) = %v, %v; want %v", l.String(), got, err, l)
		}
	}
	for _, bad := range []string{"", "median", "Min", " max"} {
		if _, err := parseLie(bad); err == nil {
			t.Errorf("ParseLie(%q) accepted a lie that does not exist", bad)
		} else if !strings.Contains(err.Error(), "min, mean, max or believer") {
			t.Errorf("ParseLie(%q): error %q does not list the valid lies", bad, err)
		}
	}
}
