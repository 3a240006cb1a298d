package host

import (
	"encoding/json"
	"math"
	"slices"
)

// A Record of a conditional space holds NaN for its inactive parameters
// (conditional.go), which JSON cannot carry: they are written as null and
// read back as NaN. A Record without NaN is encoded exactly as before. The
// stored settings' warm-start points (settingsRecord.WarmPoints) are
// nullable the same way.

// nullable is a point with NaN as null.
type nullable []*float64

func toNullable(x []float64) nullable {
	if x == nil {
		return nil
	}
	out := make(nullable, len(x))
	for i := range x {
		if !math.IsNaN(x[i]) {
			out[i] = &x[i]
		}
	}
	return out
}

func (n nullable) floats() []float64 {
	if n == nil {
		return nil
	}
	out := make([]float64, len(n))
	for i, v := range n {
		out[i] = math.NaN()
		if v != nil {
			out[i] = *v
		}
	}
	return out
}

// toNullables and floatsOf map several points (nil stays nil).
func toNullables(xs [][]float64) []nullable {
	if xs == nil {
		return nil
	}
	out := make([]nullable, len(xs))
	for i, x := range xs {
		out[i] = toNullable(x)
	}
	return out
}

func floatsOf(ns []nullable) [][]float64 {
	if ns == nil {
		return nil
	}
	out := make([][]float64, len(ns))
	for i, n := range ns {
		out[i] = n.floats()
	}
	return out
}

func hasNaN(x []float64) bool { return slices.ContainsFunc(x, math.IsNaN) }

// recordAlias is Record without its methods.
type recordAlias Record

// recordNullable is Record with its points nullable.
type recordNullable struct {
	recordAlias
	Batch         []nullable `json:"batch"`
	BestX         nullable   `json:"best_x"`
	BestObservedX nullable   `json:"best_observed_x"`
}

// MarshalJSON implements json.Marshaler: NaN coordinates as null.
func (r Record) MarshalJSON() ([]byte, error) {
	if !hasNaN(r.BestX) && !hasNaN(r.BestObservedX) && !slices.ContainsFunc(r.Batch, hasNaN) {
		return json.Marshal(recordAlias(r))
	}
	n := recordNullable{recordAlias: recordAlias(r), BestX: toNullable(r.BestX), BestObservedX: toNullable(r.BestObservedX)}
	if r.Batch != nil {
		n.Batch = make([]nullable, len(r.Batch))
		for i, x := range r.Batch {
			n.Batch[i] = toNullable(x)
		}
	}
	return json.Marshal(n)
}

// UnmarshalJSON implements json.Unmarshaler: null coordinates as NaN.
func (r *Record) UnmarshalJSON(b []byte) error {
	var n recordNullable
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*r = Record(n.recordAlias)
	r.BestX, r.BestObservedX = n.BestX.floats(), n.BestObservedX.floats()
	if n.Batch != nil {
		r.Batch = make([][]float64, len(n.Batch))
		for i, x := range n.Batch {
			r.Batch[i] = x.floats()
		}
	}
	return nil
}
