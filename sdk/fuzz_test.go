package sdk

import (
	"errors"
	"math"
	"testing"
)

// FuzzSpaceValidate: Space.Validate never panics, wraps ErrBadSpace on
// every refusal, and accepts only what it documents (finite bounds with
// Low < High, Low > 0 for LogFloat, an integer in range for Int); an
// accepted space contains its lower and upper corners (rounded inwards
// for Int).
func FuzzSpaceValidate(f *testing.F) {
	f.Add("x", 0, 0.0, 1.0, "y", 1, 1.0, 5.0)
	f.Add("lr", 2, 1e-5, 1.0, "lr", 0, 0.0, 1.0)
	f.Add(" ", 0, 0.0, 1.0, "n", 1, 0.2, 0.8)
	f.Add("a", 2, 0.0, 1.0, "b", 7, 0.0, 1.0)
	f.Add("a", 0, math.Inf(-1), 1.0, "b", 0, 1.0, 1.0)
	f.Fuzz(func(t *testing.T, n1 string, k1 int, lo1, hi1 float64, n2 string, k2 int, lo2, hi2 float64) {
		s := Space{{Name: n1, Kind: ParamKind(k1), Low: lo1, High: hi1}, {Name: n2, Kind: ParamKind(k2), Low: lo2, High: hi2}}
		err := s.Validate()
		if err != nil {
			if !errors.Is(err, ErrBadSpace) {
				t.Fatalf("%+v: error %v does not wrap ErrBadSpace", s, err)
			}
			return
		}
		lo, hi := make([]float64, len(s)), make([]float64, len(s))
		for i, p := range s {
			if !(p.Low < p.High) || math.IsInf(p.Low, 0) || math.IsInf(p.High, 0) || (p.Kind == LogFloat && p.Low < 0x1p-1022) {
				t.Fatalf("accepted %+v", p)
			}
			lo[i], hi[i] = p.Low, p.High
			if p.Kind == Int {
				lo[i], hi[i] = math.Ceil(p.Low), math.Floor(p.High)
			}
		}
		if !s.Contains(lo) || !s.Contains(hi) {
			t.Fatalf("%+v does not contain its corners %v, %v", s, lo, hi)
		}
	})
}
