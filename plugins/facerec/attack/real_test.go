package attack

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/host/loader"
	"github.com/tesbo/tesbo/plugins/facerec/frs"

	"github.com/tesbo/tesbo/internal/testenv"
)

// These tests run the real face-api sidecar. They skip when its npm
// packages are missing, and fail under CI.

var realDirs struct {
	cache   string // gallery descriptor cache shared by the tests of one run
	gallery string // two demo photos (7 faces), to keep set-up short
}

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "facerec-test-")
	if err != nil {
		panic(err)
	}
	realDirs.cache = filepath.Join(tmp, "cache")
	realDirs.gallery = filepath.Join(tmp, "gallery")
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

func requireInstalled(t testing.TB) string {
	t.Helper()
	demo, err := frs.DemoDir()
	if err != nil {
		testenv.Need(t, fmt.Sprintf("face-api sidecar not installed: %v\nrun scripts/deps.sh (it runs `npm ci` in plugins/facerec/frs)", err))
	}
	if _, err := os.Stat(realDirs.gallery); err != nil {
		os.MkdirAll(realDirs.gallery, 0o755)
		for _, n := range []string{"sample1.jpg", "sample4.jpg"} {
			if err := os.Symlink(filepath.Join(demo, n), filepath.Join(realDirs.gallery, n)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return demo
}

func realParams(t *testing.T) map[string]string {
	return map[string]string{"gallery": realDirs.gallery, "cache_dir": realDirs.cache, "sidecars": "1",
		"figure_dir": t.TempDir(), "noise_var": "0", "seed": "1"}
}

// TestRealObjective: the default attacker against a small gallery, in
// process: zero edits reproduce the unedited distance exactly, and edits
// move the distance measurably.
func TestRealObjective(t *testing.T) {
	requireInstalled(t)
	ctx := context.Background()
	o := NewObjective(zerolog.Nop())
	t.Cleanup(func() { o.Close() })
	if err := o.Configure(ctx, realParams(t)); err != nil {
		t.Fatal(err)
	}
	a, _ := o.loadAttack(ctx)
	if n := len(a.gallery.Entries); n != 7 {
		t.Errorf("gallery of sample1+sample4 has %d faces, want 7", n)
	}
	u := a.unedited
	if !(u.Distance > 0.3 && u.Distance < 1.2) {
		t.Errorf("unedited attacker at %v from the gallery", u)
	}
	r0, err := o.EvaluateDetail(ctx, make([]float64, 8))
	if err != nil {
		t.Fatal(err)
	}
	if r0.Value != u.Distance {
		t.Errorf("zero edits: d = %v, unedited %v", r0.Value, u.Distance)
	}
	vd, err := strconv.ParseFloat(r0.Meta["verified_distance"], 64)
	if err != nil || math.Abs(vd-r0.Value) > 0.15 {
		t.Errorf("re-detection of the unedited face: %v (meta %v)", vd, r0.Meta)
	}
	t.Logf("unedited: %v, re-detected %.4f", u, vd)
	for _, x := range [][]float64{{0, 0, 0, 0, 0, 1, 0, 0}, {1, 1, 0, 0, 0, 0, 0, 0}} {
		r, err := o.EvaluateDetail(ctx, x)
		if err != nil {
			t.Fatal(err)
		}
		// The edits move the face for the FRS (measured facts: glasses
		// 0.33–0.43, beard+mustache ~0.3), and so the distance to the gallery.
		shift, _ := strconv.ParseFloat(r.Meta["shift"], 64)
		if math.IsNaN(r.Value) || r.Value == u.Distance || shift < 0.15 {
			t.Errorf("x = %v: d = %v (unedited %v), shift %v: edits should move the face", x, r.Value, u.Distance, shift)
		}
		t.Logf("x = %v: d = %.4f (%s), shift %.3f", x, r.Value, r.Meta["identity"], shift)
	}
}

// TestPluginEndToEnd builds and starts the facerec plugin through the
// host's loader (go-plugin, gRPC) and evaluates through it.
func TestPluginEndToEnd(t *testing.T) {
	requireInstalled(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, file, _, _ := runtime.Caller(0)
	pluginDir := filepath.Dir(filepath.Dir(file)) // plugins/facerec
	dir := t.TempDir()
	if err := os.Symlink(pluginDir, filepath.Join(dir, "facerec")); err != nil {
		t.Fatal(err)
	}
	log := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	reg, err := loader.Discover(ctx, dir, loader.Options{Logger: log, StartTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	obj, err := reg.Objective(ctx, "facerec")
	if err != nil {
		t.Fatal(err)
	}
	info, err := obj.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Params) != 8 || !info.Minimize || !obj.SupportsConfigure() || !obj.SupportsDetail() {
		t.Fatalf("info %+v, configure %v, detail %v", info, obj.SupportsConfigure(), obj.SupportsDetail())
	}
	params := realParams(t)
	figDir := params["figure_dir"]
	if err := obj.Configure(ctx, params); err != nil {
		t.Fatal(err)
	}
	r0, err := obj.EvaluateDetail(ctx, make([]float64, 8))
	if err != nil {
		t.Fatal(err)
	}
	r1, err := obj.EvaluateDetail(ctx, []float64{0.8, 0.8, 0, 0, 0, 0, 1, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []float64{r0.Value, r1.Value} {
		if math.IsNaN(r) || r <= 0 || r > 2 {
			t.Errorf("distance %v", r)
		}
	}
	shift, _ := strconv.ParseFloat(r1.Meta["shift"], 64)
	if r1.Value == r0.Value || shift < 0.15 || r0.Meta["shift"] != "0.000000" || r1.Meta["identity"] == "" || r1.Meta["glasses"] != "round" {
		t.Errorf("unedited %v (%v), edited %v (%v): edits should move the face and the distance", r0.Value, r0.Meta, r1.Value, r1.Meta)
	}
	t.Logf("through the plugin: unedited d = %.4f, edited d = %.4f (%s)", r0.Value, r1.Value, r1.Meta["identity"])
	// The plugin saves the best figure on each improvement (best.json's
	// final false) ...
	if s := readSummary(t, filepath.Join(figDir, "best.json")); s.Final || s.Verified == nil {
		t.Errorf("best.json during the run: final %v, verified %v; want a re-checked per-improvement save", s.Final, s.Verified)
	}
	// ... and closing the host side shuts the plugin down, which saves it
	// once more as the end-of-run result and stops the sidecars.
	reg.Close()
	deadline := time.Now().Add(10 * time.Second)
	var last summary
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(figDir, "best.json")); err == nil && json.Unmarshal(b, &last) == nil && last.Final {
			if _, err := os.Stat(filepath.Join(figDir, "best.png")); err != nil {
				t.Fatalf("final best.json without best.png: %v", err)
			}
			if want := math.Min(r0.Value, r1.Value); last.Distance != want {
				t.Errorf("final best.json: d = %v, want the best evaluation's %v", last.Distance, want)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("best.json in %s not marked final after the plugin closed (last read: %+v)", figDir, last)
}

// TestDefaultAttackerNotInGallery: the default gallery is sample1–5.jpg;
// the attacker's photo and the demo's screenshots (which show the sample
// photos again) are left out.
func TestDefaultAttackerNotInGallery(t *testing.T) {
	demo := requireInstalled(t)
	c, err := Config{}.defaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Attacker != filepath.Join(demo, "sample6.jpg") || c.Gallery != demo || c.Threshold != 0.5 || c.Detect != detectLandmarks {
		t.Fatalf("defaults %+v", c)
	}
	photos, err := frs.GalleryPhotos(c.Gallery, c.GalleryGlob, []string{c.Attacker})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range photos {
		names = append(names, filepath.Base(p))
	}
	if got := strings.Join(names, " "); got != "sample1.jpg sample2.jpg sample3.jpg sample4.jpg sample5.jpg" {
		t.Errorf("default gallery photos: %s", got)
	}
}
