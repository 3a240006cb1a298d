// Package fielddiff names the fields in which two settings differ, by
// their JSON encodings: what a refusal says when the settings stored with
// a study and the ones asked for disagree, instead of printing both.
package fielddiff

import (
	"encoding/json"
	"maps"
	"slices"
)

// Unset is a Field's text for a side that lacks the field.
const Unset = "unset"

// Field is a top-level JSON field whose values differ: its key and each
// side's JSON text (Unset where the side has none).
type Field struct{ Key, A, B string }

// Short reports whether both values fit a one-line message (else name
// the key alone).
func (f Field) Short() bool { return len(f.A)+len(f.B) <= 60 }

// Fields returns, sorted by key, the top-level fields of a's and b's JSON
// encodings whose values differ. A value that does not encode as a JSON
// object is compared whole, under the key "".
func Fields(a, b any) []Field {
	ma, mb := fields(a), fields(b)
	keys := maps.Clone(ma)
	maps.Copy(keys, mb)
	var out []Field
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if va, vb := text(ma, k), text(mb, k); va != vb {
			out = append(out, Field{Key: k, A: va, B: vb})
		}
	}
	return out
}

func fields(v any) map[string]json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]json.RawMessage{"": json.RawMessage(err.Error())}
	}
	m := map[string]json.RawMessage{}
	if json.Unmarshal(b, &m) != nil {
		return map[string]json.RawMessage{"": b}
	}
	return m
}

func text(m map[string]json.RawMessage, k string) string {
	if v, ok := m[k]; ok {
		return string(v)
	}
	return Unset
}
