package serve

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tesbo/tesbo/internal/testenv"
)

// chromium returns the path of a Chromium (Debian's chromium, which
// scripts/deps.sh installs), calling testenv.Need when there is none.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Need(t, "no chromium for the browser test: install it (apt-get install chromium)")
	return ""
}

// browser starts a headless Chromium (without its sandbox, which needs
// privileges a container or root lacks) and returns a tab's context;
// JavaScript exceptions in the page fail t.
func browser(t testing.TB, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(width, height))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	var mu sync.Mutex
	err := chromedp.Listen(ctx, func(ev any) { // starts the browser
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			mu.Lock()
			defer mu.Unlock()
			msg := e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
			t.Errorf("JavaScript exception: %s", msg)
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifacts returns where a test's screenshots go: $TESBO_ARTIFACTS when
// set, else a temporary directory.
func artifacts(t *testing.T) string {
	if d := os.Getenv("TESBO_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// waitJS polls a JavaScript boolean expression until it holds, failing t
// after timeout with the value of show. An expression that throws counts
// as false (a throwing poll would never time out).
func waitJS(t testing.TB, ctx context.Context, expr, show string, timeout time.Duration) {
	t.Helper()
	expr = "(() => { try { return (" + expr + "); } catch (e) { return false; } })()"
	_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		v, _ := chromedp.Run(ctx, chromedp.Evaluate[any](show))
		t.Fatalf("waiting %v for %s: %v (%s = %v)", timeout, expr, err, show, v)
	}
}

// evalInt evaluates a JavaScript expression with an integer value.
func evalInt(t *testing.T, ctx context.Context, expr string) int {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// The study page in a real browser: its progress chart has a point per
// stored trial; trials another goroutine adds appear within 2 s without
// a reload; the model view, scatter and table are drawn; a screenshot is
// saved.
func TestBrowserLiveStudy(t *testing.T) {
	ctx := browser(t, 1280, 2400)
	db, _ := newDB(t)
	st := openStudy(t, db, "synthetic/branin-live", "ei", 40)
	step(t, st)
	step(t, st)
	srv := newServer(t, db, Settings{Poll: 200 * time.Millisecond})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close() // first: it ends the page's event stream, which ts.Close would wait for

	stored := func() int {
		row, _ := db.Study(context.Background(), "synthetic/branin-live")
		trials, err := db.Trials(context.Background(), row.ID)
		if err != nil {
			t.Fatal(err)
		}
		return len(trials)
	}
	const points = `document.getElementById('progress').dataset.points`
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/study/synthetic%2Fbranin-live")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, fmt.Sprintf(`%s === '%d'`, points, stored()), points, 10*time.Second)
	// The chart itself holds that many x values, and the table that many rows.
	n := evalInt(t, ctx, `tesbo.charts.progress.data[0].length`)
	rows := evalInt(t, ctx, `document.querySelectorAll('#trials tbody tr').length`)
	if n != stored() || rows != stored() {
		t.Fatalf("chart has %d points, table %d rows, database %d trials", n, rows, stored())
	}

	// Another goroutine adds three iterations while the page is open.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			time.Sleep(150 * time.Millisecond)
			step(t, st)
		}
	}()
	<-done
	want := stored()
	if want != 12 {
		t.Fatalf("%d trials stored", want)
	}
	t0 := time.Now()
	waitJS(t, ctx, fmt.Sprintf(`%s === '%d'`, points, want), points, 2*time.Second)
	t.Logf("%d new trials shown %v after the last commit", 6, time.Since(t0).Round(time.Millisecond))

	// The model of the latest iteration (4), the scatter and the times.
	waitJS(t, ctx, `document.querySelectorAll('#model .uplot').length === 2 && tesbo.modelIter === 4`,
		`document.getElementById('model-note').textContent`, 5*time.Second)
	scatter := evalInt(t, ctx, `document.querySelectorAll('#scatter .uplot').length`)
	times := evalInt(t, ctx, `tesbo.charts.times.data[0].length`)
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('f-state').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	if scatter != 2 || times != 4 || !strings.HasPrefix(state, "running") {
		t.Fatalf("scatter charts %d, time bars %d, state %q", scatter, times, state)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(artifacts(t), "serve-live-study.png")
	if err := os.WriteFile(out, png, 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.CheckPNG(t, out)
	t.Logf("screenshot %s", out)
}

// BenchmarkBrowserStudyPage10k loads a 10,000-trial study's page in
// headless Chromium until its progress chart holds every trial (the table,
// scatter and time charts are drawn in the same pass).
func BenchmarkBrowserStudyPage10k(b *testing.B) {
	db := bigStudy(b, 10000)
	srv := newServer(b, db, Settings{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	ctx := browser(b, 1280, 1000)
	for b.Loop() {
		if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/study/big")); err != nil {
			b.Fatal(err)
		}
		waitJS(b, ctx, `document.getElementById('progress').dataset.points === '10000'`,
			`document.getElementById('progress').dataset.points`, 20*time.Second)
	}
}
