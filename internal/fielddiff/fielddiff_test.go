package fielddiff

import (
	"reflect"
	"testing"
)

// Fields lists the differing fields by key, a field one side lacks as
// Unset, and equal fields not at all.
func TestFields(t *testing.T) {
	type s struct {
		A int               `json:"a"`
		B string            `json:"b,omitempty"`
		C map[string]string `json:"c,omitempty"`
	}
	got := Fields(s{A: 1, B: "x"}, s{A: 2, C: map[string]string{"k": "v"}})
	want := []Field{{"a", "1", "2"}, {"b", `"x"`, Unset}, {"c", Unset, `{"k":"v"}`}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Fields = %+v, want %+v", got, want)
	}
	if Fields(s{A: 1}, s{A: 1}) != nil {
		t.Fatal("equal values differ")
	}
	if got := Fields(3, 4); len(got) != 1 || got[0].Key != "" {
		t.Fatalf("non-objects: %+v, want one whole-value field", got)
	}
}
