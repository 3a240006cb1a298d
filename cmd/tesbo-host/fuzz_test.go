package main

import (
	"maps"
	"strings"
	"testing"
)

// FuzzParseRunParams: run's --param parser never panics, and what it
// accepts has non-empty, unreserved keys, one per flag, that parse again
// to the same map.
func FuzzParseRunParams(f *testing.F) {
	f.Add("lr=0.1", "depth=3")
	f.Add("a==b", "a=")
	f.Add("noise_var=0", "x=1")
	f.Add("=v", "k")
	f.Add("k=1", "k=2")
	f.Fuzz(func(t *testing.T, a, b string) {
		m, err := parseRunParams([]string{a, b})
		if err != nil {
			if m != nil {
				t.Fatalf("error %v with a map %v", err, m)
			}
			return
		}
		if len(m) != 2 {
			t.Fatalf("%q, %q gave %d keys", a, b, len(m))
		}
		var again []string
		for k, v := range m {
			if k == "" || k == "seed" || k == "noise_var" || strings.Contains(k, "=") {
				t.Fatalf("accepted key %q", k)
			}
			again = append(again, k+"="+v)
		}
		if m2, err := parseRunParams(again); err != nil || !maps.Equal(m, m2) {
			t.Fatalf("re-parsed %v: %v, %v", again, m2, err)
		}
	})
}

// FuzzParseChecksums: the --plugin-sha256 parser never panics, and what it
// accepts maps non-empty names to non-empty lower-case values.
func FuzzParseChecksums(f *testing.F) {
	f.Add("synthetic=ABCDEF0123", "")
	f.Add("a=b", "a=C")
	f.Add("=x", "y=")
	f.Add("noequals", "é=Ä")
	f.Fuzz(func(t *testing.T, a, b string) {
		kvs := []string{a}
		if b != "" {
			kvs = append(kvs, b)
		}
		m, err := parseChecksums(kvs)
		if err != nil {
			return
		}
		for k, v := range m {
			if k == "" || v == "" || v != strings.ToLower(v) || strings.Contains(k, "=") {
				t.Fatalf("accepted %q=%q from %q", k, v, kvs)
			}
		}
	})
}
