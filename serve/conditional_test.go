package serve

import (
	"context"
	"slices"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/conditional"
)

// The model views of a conditional space answer with its inactive
// parameters null (x̄'s and the trusted maximizers' points), where NaN,
// which JSON cannot carry, had made them empty 200 answers.
func TestModelConditional(t *testing.T) {
	db, _ := newDB(t)
	obj, _ := conditional.New("cond/hartmann")
	if _, err := host.Optimize(context.Background(), obj, host.Options{DB: hostStorage(db), Name: "c",
		Init: 4, Iters: 3, Seed: 1, Grace: -1}); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, db, Settings{})
	var m struct {
		XBar    struct{ X []*float64 } `json:"xbar"`
		Trusted []struct{ X []*float64 }
		Slices  []struct{ X, Mean []float64 }
	}
	decodeJSON(t, get(t, srv, "/api/model?name=c"), 200, &m)
	if len(m.XBar.X) != 9 || len(m.Slices) == 0 || len(m.Trusted) == 0 {
		t.Fatalf("model view: x̄ %v, %d slices, %d trusted", m.XBar.X, len(m.Slices), len(m.Trusted))
	}
	// momentum (7) and beta (8) exist on one branch each: x̄ has one null.
	if (m.XBar.X[7] == nil) == (m.XBar.X[8] == nil) {
		t.Fatalf("x̄ %v: want exactly one of momentum, beta null", m.XBar.X)
	}
	// The slice of the inactive one spans its range, flat: the parameter
	// does not exist at x̄.
	off := m.Slices[7]
	if m.XBar.X[8] == nil {
		off = m.Slices[8]
	}
	if off.X[0] != 0 || off.X[len(off.X)-1] != 1 || slices.Min(off.Mean) != slices.Max(off.Mean) {
		t.Fatalf("inactive parameter's slice: x %v, mean %v", off.X, off.Mean)
	}
	var g struct {
		XBar []*float64 `json:"xbar"`
		Mean [][]float64
	}
	for _, q := range []string{"x=1&y=2", "x=7&y=8", "x=0&y=7"} {
		decodeJSON(t, get(t, srv, "/api/model2d?name=c&"+q), 200, &g)
		if len(g.XBar) != 9 || len(g.Mean) == 0 {
			t.Fatalf("2-D slice %s: x̄ %v, %d rows", q, g.XBar, len(g.Mean))
		}
	}
}
