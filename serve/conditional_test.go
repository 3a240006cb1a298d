package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

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

// The study page of a conditional study draws the model's slices (one per
// parameter, the inactive one's flat, no x̄ dot on it), the 2-D slice
// over a conditional pair, and the parallel coordinates, with no script
// error.
func TestBrowserConditional(t *testing.T) {
	db, _ := newDB(t)
	obj, _ := conditional.New("cond/hartmann")
	res, err := host.Optimize(context.Background(), obj, host.Options{DB: hostStorage(db), Name: "c",
		Init: 4, Iters: 6, Seed: 1, Grace: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, db, Settings{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	ctx := browser(t, 1400, 900)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/study/c?static=1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, fmt.Sprintf(`document.querySelectorAll('#model .uplot').length === 9 &&
		document.getElementById('parallel').dataset.lines === '%d' && document.getElementById('contour').dataset.cells !== '0'`, res.Evaluations),
		`[document.querySelectorAll('#model .uplot').length, document.getElementById('model-note').textContent, document.getElementById('parallel').dataset.lines]`, 15*time.Second)
	// Of momentum (7) and beta (8), the one inactive at x̄ has no x̄ dot.
	dots := evalJS[[]int](t, ctx, `[7, 8].map((j) => tesbo.charts.model[j].data[4].filter((v) => v !== null).length)`)
	if dots[0]+dots[1] != 1 {
		t.Errorf("x̄ dots on momentum, beta: %v, want one", dots)
	}
	// The 2-D slice over momentum × beta.
	sel := `(id, v) => { const s = document.getElementById(id); s.value = v; s.dispatchEvent(new Event('change')); }`
	evalJS[any](t, ctx, `(`+sel+`)('c-x', '7'), (`+sel+`)('c-y', '8'), true`)
	waitJS(t, ctx, `document.getElementById('contour').dataset.cells !== '0' && tesbo.grid.x.param === 7 && tesbo.grid.y.param === 8`,
		`[document.getElementById('contour').dataset.cells, document.getElementById('contour-note').textContent]`, 10*time.Second)
}
