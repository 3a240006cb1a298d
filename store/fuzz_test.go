package store

import (
	"math"
	"testing"
)

// FuzzDecodeFloats: a stored point's JSON never makes decoding panic, and
// a decoded point encodes back to JSON that decodes to the same bits.
func FuzzDecodeFloats(f *testing.F) {
	for _, s := range []string{"[0.1,0.9]", "[]", "null", "[1e308,-0,5e-324]", "[1,", `["a"]`, "[1e999]", "{}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		x, err := decodeFloats(s)
		if err != nil {
			return
		}
		enc, err := encodeFloats(x)
		if err != nil {
			t.Fatalf("%q decoded to %v, which does not encode: %v", s, x, err)
		}
		y, err := decodeFloats(enc)
		if err != nil || len(y) != len(x) {
			t.Fatalf("%q → %v → %q → %v, %v", s, x, enc, y, err)
		}
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(y[i]) {
				t.Fatalf("coordinate %d: %v became %v", i, x[i], y[i])
			}
		}
	})
}
