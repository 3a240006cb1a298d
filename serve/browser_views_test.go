package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// badError is the error of the failed trials: long, with markup that must
// stay text.
var badError = `objective exploded: <img src=x onerror="document.title='pwned'"> ` + strings.Repeat("details ", 40) + "END"

// flakyMixed is mixed failing with badError where x > 0.8.
type flakyMixed struct{ mixed }

func (f flakyMixed) Evaluate(ctx context.Context, x []float64) (float64, error) {
	if x[1] > 0.8 {
		return 0, errors.New(badError)
	}
	return f.mixed.Evaluate(ctx, x)
}

// mixedStudy runs a study of flakyMixed (a LogFloat, a Float, a
// categorical): init 8, then iters batches of 2.
func mixedStudy(t testing.TB, db *store.DB, name string, iters int) (complete, failed int) {
	t.Helper()
	res, err := host.Optimize(context.Background(), flakyMixed{}, host.Options{DB: hostStorage(db), Name: name,
		Acquisition: "ei", Init: 8, Batch: 2, Iters: iters, Seed: 6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failures == 0 {
		t.Fatal("no trial failed: the test needs some")
	}
	return res.Evaluations, res.Failures
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// resize sets the page's viewport width and waits for the charts to follow.
func resize(t *testing.T, ctx context.Context, width int) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), 900)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, fmt.Sprintf(`window.innerWidth === %d`, width), `window.innerWidth`, 5*time.Second)
	time.Sleep(400 * time.Millisecond) // ResizeObserver → next animation frame → setSize
}

// The study page as an optuna-dashboard user judges it (issue 29, items
// 13–19): log axes labelled below 1e-3; a categorical drawn and shown by
// its choices' names; nothing wider than the window at 1024 and 1400 px;
// failed trials marked in the progress chart and their whole error
// reachable (as text); parallel coordinates, a 2-D slice of the model,
// parameter importance and a log toggle; ?static=1 opens no event
// stream.
func TestBrowserStudyViews(t *testing.T) {
	db, _ := newDB(t)
	complete, failed := mixedStudy(t, db, "cat", 12)
	srv := newServer(t, db, Settings{Poll: 200 * time.Millisecond})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	ctx := browser(t, 1400, 900)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/study/cat?static=1")); err != nil {
		t.Fatal(err)
	}
	all := complete + failed
	waitJS(t, ctx, fmt.Sprintf(`document.getElementById('progress').dataset.points === '%d' &&
		document.querySelectorAll('#model .uplot').length === 3 && document.getElementById('contour').dataset.cells !== '0' &&
		document.getElementById('parallel').dataset.lines === '%d'`, all, complete),
		`[document.getElementById('progress').dataset.points, document.getElementById('model-note').textContent, document.getElementById('contour-note').textContent]`, 15*time.Second)

	t.Run("13 log axes", func(t *testing.T) {
		// The regret chart and the LogFloat parameter's axis: no "0" among
		// the labels of values far below 1e-3, and exponents shown.
		for _, axis := range []string{`tesbo.charts.regret.axes[1]`, `tesbo.charts.scatter[0].axes[0]`} {
			labels := evalJS[[]string](t, ctx, axis+`._values.map(String)`)
			joined := strings.Join(labels, " ")
			if len(labels) == 0 || strings.Contains(" "+joined+" ", " 0 ") || !strings.Contains(joined, "e-") {
				t.Errorf("%s labels %q", axis, labels)
			}
		}
		lo := evalJS[float64](t, ctx, `tesbo.charts.regret.scales.y.min`)
		if lo >= 1e-3 {
			t.Errorf("the regret axis starts at %g: the study does not exercise small regrets", lo)
		}
	})

	t.Run("14 categorical", func(t *testing.T) { viewCategorical(t, ctx) })

	t.Run("15 no horizontal overflow", func(t *testing.T) {
		for _, w := range []int{1400, 1024} {
			resize(t, ctx, w)
			sw := evalInt(t, ctx, `document.documentElement.scrollWidth`)
			widest := evalInt(t, ctx, `Math.floor(Math.max(...[...document.querySelectorAll('.uplot, canvas')].map((e) => e.getBoundingClientRect().right)))`)
			if sw > w || widest > w {
				t.Errorf("at %d px: page %d px wide, rightmost chart edge %d", w, sw, widest)
			}
			rh := evalInt(t, ctx, `Math.round(document.getElementById('regret').getBoundingClientRect().height)`)
			if rh < 250 {
				t.Errorf("regret chart %d px high", rh)
			}
		}
		resize(t, ctx, 1400)
	})

	t.Run("17 failed trials and errors", func(t *testing.T) { viewFailedTrials(t, ctx, failed) })

	t.Run("18 parallel, 2-D slice, importance, log toggle", func(t *testing.T) { viewParallelSliceImportance(t, ctx, complete, all) })

	t.Run("19 static", func(t *testing.T) {
		streams := evalInt(t, ctx, `performance.getEntriesByType('resource').filter((e) => e.name.includes('/api/events')).length`)
		if streams != 0 || !evalJS[bool](t, ctx, `tesbo.static`) {
			t.Errorf("?static=1 opened %d event streams", streams)
		}
	})

	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(artifacts(t), "serve-study-views.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", out)

	t.Run("markup in parameter and choice names stays text", func(t *testing.T) {
		runEvil(t, db)
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/study/evil?static=1")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, `document.querySelectorAll('#model .uplot').length === 2 && document.querySelectorAll('#importance .imp').length === 2 &&
			document.getElementById('parallel').dataset.lines !== '0' && document.getElementById('contour').dataset.cells !== '0'`,
			`document.getElementById('model-note').textContent`, 10*time.Second)
		if n := evalInt(t, ctx, `document.querySelectorAll('img, script:not([src])').length`); n != 0 || evalJS[string](t, ctx, `document.title`) == "pwned" {
			t.Fatalf("markup in names was interpreted: %d elements", n)
		}
		if got := evalJS[string](t, ctx, `document.querySelector('#c-x option').textContent`); got != evilName {
			t.Fatalf("parameter select shows %q", got)
		}
	})

}

// viewCategorical: the categorical opt is drawn and listed by its choices'
// names, and the model along it is three points, no line.
func viewCategorical(t *testing.T, ctx context.Context) {
	labels := evalJS[[]string](t, ctx, `tesbo.charts.scatter[2].axes[0]._values.map(String)`)
	if strings.Join(labels, ",") != "adam,sgd,rmsprop" {
		t.Errorf("categorical axis labels %q", labels)
	}
	col := evalJS[int](t, ctx, `[...document.querySelectorAll('#trials thead th')].findIndex((th) => th.textContent === 'opt')`)
	cells := evalJS[[]string](t, ctx, fmt.Sprintf(`[...document.querySelectorAll('#trials tbody tr')].map((r) => r.cells[%d].textContent)`, col))
	for _, c := range cells {
		if c != "adam" && c != "sgd" && c != "rmsprop" {
			t.Fatalf("table shows opt as %q (column %d)", c, col)
		}
	}
	// The model along opt: points at the three choices, no line.
	lines := evalJS[int](t, ctx, `tesbo.charts.model[2].series.slice(1).filter((s) => s.paths && s.paths(tesbo.charts.model[2], 1, 0, 2) !== null).length`)
	xs := evalJS[[]float64](t, ctx, `tesbo.charts.model[2].data[0].filter((x, i) => tesbo.charts.model[2].data[1][i] !== null)`)
	if lines != 0 || len(xs) != 3 || xs[0] != 0 || xs[2] != 2 {
		t.Errorf("categorical model slice: %d series with lines, mean at %v", lines, xs)
	}
}

// viewFailedTrials: the failed trials are marked in the progress chart and
// their whole error is reachable, as text.
func viewFailedTrials(t *testing.T, ctx context.Context, failed int) {
	marked := evalInt(t, ctx, `tesbo.charts.progress.data[4].filter((v) => v !== null).length`)
	if marked != failed || evalJS[string](t, ctx, `tesbo.charts.progress.series[4].label`) != "failed" {
		t.Errorf("%d failed trials marked, %d failed", marked, failed)
	}
	titles := evalJS[[]string](t, ctx, `[...document.querySelectorAll('#trials td.err')].map((td) => td.title)`)
	if len(titles) != failed {
		t.Fatalf("%d error cells, %d failed trials", len(titles), failed)
	}
	for _, ti := range titles {
		if ti != badError {
			t.Fatalf("error cell's title %q, want the whole error", ti)
		}
	}
	if evalInt(t, ctx, `document.querySelectorAll('#trials img').length`) != 0 || evalJS[string](t, ctx, `document.title`) == "pwned" {
		t.Fatal("markup in an error was interpreted")
	}
}

// viewParallelSliceImportance: parallel coordinates of the complete
// trials, a 2-D slice that follows the chosen pair, parameter importance,
// and the progress chart's log toggle.
func viewParallelSliceImportance(t *testing.T, ctx context.Context, complete, all int) {
	if n := evalInt(t, ctx, `+document.getElementById('parallel').dataset.lines`); n != complete {
		t.Errorf("parallel coordinates: %d lines, %d complete trials", n, complete)
	}
	cells := evalInt(t, ctx, `+document.getElementById('contour').dataset.cells`)
	nx := evalInt(t, ctx, `tesbo.grid.x.x.length`)
	ny := evalInt(t, ctx, `tesbo.grid.y.x.length`)
	if cells != nx*ny || cells < 3*5 {
		t.Errorf("2-D slice: %d cells of a %d×%d grid", cells, nx, ny)
	}
	// Another pair: the slice follows the choice.
	evalJS[bool](t, ctx, `(() => { const s = document.getElementById('c-y'); s.value = document.getElementById('c-x').value === '1' ? '2' : '1'; return s.dispatchEvent(new Event('change')) })()`)
	waitJS(t, ctx, `tesbo.grid.y.name === 'x' || tesbo.grid.x.name === 'x'`, `[tesbo.grid.x.name, tesbo.grid.y.name]`, 5*time.Second)
	imp := evalInt(t, ctx, `document.querySelectorAll('#importance .imp').length`)
	if imp != 3 {
		t.Errorf("%d importance bars", imp)
	}
	evalJS[bool](t, ctx, `(document.getElementById('logy').click(), true)`)
	waitJS(t, ctx, `document.getElementById('progress').dataset.log !== ''`, `document.getElementById('progress').dataset.log`, 3*time.Second)
	labels := evalJS[[]string](t, ctx, `tesbo.charts.progress.axes[1]._values.map(String)`)
	if evalJS[string](t, ctx, `String(tesbo.charts.progress.scales.y.distr)`) == "1" || len(labels) == 0 {
		t.Errorf("log toggle: distr %s, labels %q", evalJS[string](t, ctx, `String(tesbo.charts.progress.scales.y.distr)`), labels)
	}
	if n := evalInt(t, ctx, `tesbo.charts.progress.data[0].length`); n != all {
		t.Errorf("after the toggle the progress chart has %d points", n)
	}
}

// The study list updates itself (a study created while the page is open
// appears), sorts by a clicked column and filters by text and state;
// names stay text.
func TestBrowserStudyList(t *testing.T) {
	db, _ := newDB(t)
	runStudy(t, db, "b-second", "random", 1)
	runStudy(t, db, "a-first", "random", 2)
	srv := newServer(t, db, Settings{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	ctx := browser(t, 1024, 800)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/")); err != nil {
		t.Fatal(err)
	}
	names := `[...document.querySelectorAll('#studies tbody tr td:first-child')].map((td) => td.textContent).join(',')`
	waitJS(t, ctx, `window.tesboList && tesboList.polls > 0`, names, 5*time.Second)
	if got := evalJS[string](t, ctx, names); got != "b-second,a-first" {
		t.Fatalf("initial order %q", got)
	}
	// Sort by name, then reversed.
	click := `(document.querySelector('#studies th[data-key=name]').click(), true)`
	evalJS[bool](t, ctx, click)
	if got := evalJS[string](t, ctx, names); got != "a-first,b-second" {
		t.Errorf("sorted by name %q", got)
	}
	evalJS[bool](t, ctx, click)
	if got := evalJS[string](t, ctx, names); got != "b-second,a-first" {
		t.Errorf("sorted by name, reversed %q", got)
	}
	// A study started now appears without a reload; markup in its name
	// stays text.
	evil := `<img src=x onerror="document.title='pwned'">`
	s := openStudy(t, db, evil, "random", 3)
	step(t, s)
	waitJS(t, ctx, `document.querySelectorAll('#studies tbody tr').length === 3`, names, 5*time.Second)
	if evalInt(t, ctx, `document.querySelectorAll('#studies img').length`) != 0 || evalJS[string](t, ctx, `document.title`) == "pwned" {
		t.Fatal("markup in a study name was interpreted")
	}
	if w := evalInt(t, ctx, `document.documentElement.scrollWidth`); w > 1024 {
		t.Errorf("the list is %d px wide in a 1024 px window", w)
	}
	// Filter by text, then by state.
	evalJS[bool](t, ctx, `(() => { const q = document.getElementById('q'); q.value = 'first'; return q.dispatchEvent(new Event('input')) })()`)
	if got := evalJS[string](t, ctx, names); got != "a-first" {
		t.Errorf("filtered by 'first': %q", got)
	}
	evalJS[bool](t, ctx, `(() => { const q = document.getElementById('q'); q.value = ''; q.dispatchEvent(new Event('input')); const s = document.getElementById('state'); s.value = 'running'; s.dispatchEvent(new Event('change')); return true })()`)
	if got := evalJS[string](t, ctx, names); got != evil {
		t.Errorf("filtered by state running: %q", got)
	}
}

// evilName is a parameter name with markup.
const evilName = `<img src=x onerror="document.title='pwned'">`

// evil has a parameter and a categorical's choice named with markup.
type evil struct{}

func (evil) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "test/evil", Params: []sdk.Param{
		{Name: evilName, Kind: sdk.Float, Low: 0, High: 1},
		{Name: "c", Kind: sdk.Categorical, Choices: []string{"<script>document.title='pwned'</script>", "<b>b</b>"}},
	}}, nil
}

func (evil) Evaluate(_ context.Context, x []float64) (float64, error) {
	return -(x[0]-0.5)*(x[0]-0.5) - x[1], nil
}

func runEvil(t testing.TB, db *store.DB) {
	t.Helper()
	if _, err := host.Optimize(context.Background(), evil{}, host.Options{DB: hostStorage(db), Name: "evil",
		Acquisition: "ei", Init: 5, Batch: 2, Iters: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
}
