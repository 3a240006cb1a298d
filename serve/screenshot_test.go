package serve

import (
	"context"
	"math"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/testenv"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// screenshotArgs are the arguments of the README's screenshot command
// (section "Watching a study in the browser"): headless Chromium renders
// the page with ?static=1 (no event stream, so the virtual-time budget
// runs out and Chromium exits) and writes the PNG.
func screenshotArgs(pageURL, out string) []string {
	return []string{"--headless", "--no-sandbox", "--hide-scrollbars", "--window-size=1100,1500",
		"--virtual-time-budget=10000", "--screenshot=" + out, pageURL}
}

// shoot runs the screenshot command on the page of study name, failing t
// unless Chromium exits within a minute with a PNG.
func shoot(t *testing.T, base, name, out string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	page := base + "/study/" + url.PathEscape(name) + "?static=1"
	cmd := exec.CommandContext(ctx, chromium(t), screenshotArgs(page, out)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // a profile of its own
	cmd.WaitDelay = 5 * time.Second                     // Chromium's children hold the output open
	start := time.Now()
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the screenshot command did not finish within a minute (an event stream keeps the virtual-time budget from expiring): %s", b)
	}
	if err != nil {
		t.Fatalf("screenshot command: %v: %s", err, b)
	}
	testenv.CheckPNG(t, out)
	t.Logf("screenshot %s in %v", out, time.Since(start).Round(time.Millisecond))
}

// The README's screenshot command ends and writes a PNG of a study page.
func TestScreenshotCommand(t *testing.T) {
	db, _ := newDB(t)
	runMixed(t, db, "m/shot", 5, 2)
	srv := newServer(t, db, Settings{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	shoot(t, ts.URL, "m/shot", filepath.Join(artifacts(t), "serve-screenshot-command.png"))
}

// demo is the README screenshot's objective: the negated Branin function
// with a categorical "variant" that lowers it by 0, 3 or 8 (maximized;
// f* = −0.397887 with the plain variant).
type demo struct{}

func (demo) Info(ctx context.Context) (sdk.Info, error) {
	info, _ := branin{}.Info(ctx)
	info.Name = "demo/branin-variants"
	info.Params = append(info.Params, sdk.Param{Name: "variant", Kind: sdk.Categorical, Choices: []string{"plain", "shifted", "steep"}})
	return info, nil
}

func (demo) Evaluate(ctx context.Context, x []float64) (float64, error) {
	v, err := branin{}.Evaluate(ctx, x[:2])
	return v - []float64{0, 3, 8}[int(math.Round(x[2]))], err
}

// TestReadmeScreenshot writes the README's screenshot of a study page with
// the README's command: TESBO_SCREENSHOT=$PWD/docs/serve.png go test
// ./serve -run ReadmeScreenshot (a demo study of 36 trials with a
// categorical parameter, run with tes), or of study
// TESBO_SCREENSHOT_STUDY in database TESBO_SCREENSHOT_DB. It does nothing
// without TESBO_SCREENSHOT.
func TestReadmeScreenshot(t *testing.T) {
	out := os.Getenv("TESBO_SCREENSHOT")
	if out == "" {
		t.Skip("set TESBO_SCREENSHOT (and optionally TESBO_SCREENSHOT_DB, TESBO_SCREENSHOT_STUDY) to write a screenshot")
	}
	name := os.Getenv("TESBO_SCREENSHOT_STUDY")
	var db *store.DB
	if path := os.Getenv("TESBO_SCREENSHOT_DB"); path != "" {
		var err error
		if db, err = store.Open(path, store.Options{DeferMigration: true}); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
	} else {
		t.Chdir(t.TempDir()) // the page shows the database's path: a short one
		var err error
		if db, err = store.Open("tesbo.db", store.Options{Create: true}); err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		name = "demo"
		if _, err := host.Optimize(context.Background(), demo{}, host.Options{DB: hostStorage(db), Name: name,
			Acquisition: "tes", Init: 8, Batch: 2, Iters: 14, Seed: 1}); err != nil {
			t.Fatal(err)
		}
	}
	srv := newServer(t, db, Settings{})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	shoot(t, ts.URL, name, out)
}
