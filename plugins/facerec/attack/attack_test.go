package attack

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/attack/attacktest"
	"github.com/tesbo/tesbo/plugins/facerec/frs"
	"github.com/tesbo/tesbo/plugins/facerec/synth"
	"github.com/tesbo/tesbo/sdk"

	"github.com/tesbo/tesbo/plugins/facerec/internal/facetest"
)

// fakeSetup writes the fake attacker photo and gallery (attacktest.Setup)
// and returns a Config for them with the fake FRS.
func fakeSetup(t *testing.T) (Config, *attacktest.FRS) {
	t.Helper()
	files, f := attacktest.Setup(t)
	return Config{Attacker: files.Attacker, Gallery: files.Gallery, SaveDir: filepath.Join(files.Dir, "out"), Sidecars: 1, CacheDir: "off"}, f
}

func fakeObjective(t *testing.T, extra map[string]string) (*Objective, *attacktest.FRS, Config) {
	t.Helper()
	cfg, f := fakeSetup(t)
	o := NewObjective(zerolog.Nop())
	o.NewFRS = func() frs.FRS { return f }
	params := map[string]string{"attacker": cfg.Attacker, "gallery": cfg.Gallery, "save_dir": "", "cache_dir": "off",
		"noise_var": "0", "seed": "7"}
	for k, v := range extra {
		params[k] = v
	}
	if _, ok := extra["save_dir"]; !ok {
		delete(params, "save_dir")
		params["figure_dir"] = cfg.SaveDir
	}
	if err := o.Configure(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	a, _ := o.loadAttack(context.Background())
	return o, f, a.Config()
}

func TestInfo(t *testing.T) {
	info, err := NewObjective(zerolog.Nop()).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := info.Validate(); err != nil {
		t.Fatal(err)
	}
	if info.Name != "facerec" || !info.Minimize || info.Optimum == nil || *info.Optimum != 0 || len(info.Params) != 8 {
		t.Fatalf("info %+v", info)
	}
	want := []string{"beard", "mustache", "forehead_scar", "cheek_scar", "mole", "glasses_square", "glasses_round", "smile"}
	for i, p := range info.Params {
		if p.Name != want[i] || p.Kind != sdk.Float || p.Low != 0 || p.High != 1 {
			t.Errorf("param %d = %+v, want %s in [0, 1]", i, p, want[i])
		}
	}
}

func TestParseParams(t *testing.T) {
	c, err := ParseParams(map[string]string{"threshold": "0.45", "save_dir": "/tmp/x", "sidecars": "2", "detect": "ssd",
		"frs_timeout": "30s", "attacker_face": "1", "noise_var": "0.1", "seed": "3", "backend": "exec:python3 x.py"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Threshold != 0.45 || c.SaveDir != "/tmp/x" || !c.SaveAll || c.Sidecars != 2 || c.Detect != "ssd" ||
		c.Timeout.Seconds() != 30 || c.AttackerFace != 1 || c.Backend != "exec:python3 x.py" {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range []map[string]string{
		{"treshold": "0.5"}, {"threshold": "-1"}, {"threshold": "x"}, {"sidecars": "0"}, {"detect": "mtcnn"},
		{"frs_timeout": "soon"}, {"attacker_face": "-2"},
	} {
		_, err := ParseParams(bad)
		if err == nil {
			t.Errorf("%v accepted", bad)
			continue
		}
		for k := range bad {
			if !strings.Contains(err.Error(), k) {
				t.Errorf("%v: error %q does not name the key", bad, err)
			}
		}
	}
	if _, err := ParseParams(map[string]string{"treshold": "0.5"}); err == nil || !strings.Contains(err.Error(), "threshold:") {
		t.Errorf("unknown key: error %v should list the accepted keys", err)
	}
}

func TestZeroEditsGiveTheUneditedDistance(t *testing.T) {
	o, _, _ := fakeObjective(t, nil)
	a, _ := o.loadAttack(context.Background())
	r, err := o.EvaluateDetail(context.Background(), make([]float64, 8))
	if err != nil {
		t.Fatal(err)
	}
	if r.Value != a.unedited.Distance || r.Meta["identity"] != a.unedited.Identity {
		t.Errorf("zero edits: %v %v, unedited %+v", r.Value, r.Meta, a.unedited)
	}
}

func TestEditsReachTheirGalleryEntry(t *testing.T) {
	o, _, _ := fakeObjective(t, map[string]string{"threshold": "0.01"})
	// Entry 0 is the attacker with round glasses: these edits reproduce it
	// exactly (squared 0.3 < 0.5 leaves the style round).
	r, err := o.EvaluateDetail(context.Background(), []float64{0, 0, 0, 0, 0, 0.3, 0.8, 0})
	if err != nil {
		t.Fatal(err)
	}
	if r.Value > 1e-12 || r.Meta["identity"] != "row 0" || r.Meta["success"] != "true" || r.Meta["glasses"] != "round" {
		t.Errorf("round glasses: value %v meta %v", r.Value, r.Meta)
	}
	if r.Meta["verified_identity"] != "row 0" {
		t.Errorf("a new best should be re-checked with detection: meta %v", r.Meta)
	}
	r, err = o.EvaluateDetail(context.Background(), []float64{1, 0, 0, 0, 0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if r.Value > 1e-12 || r.Meta["identity"] != "row 1" {
		t.Errorf("full beard: value %v meta %v", r.Value, r.Meta)
	}
	r, err = o.EvaluateDetail(context.Background(), []float64{0.3, 0, 0, 0, 0, 0, 0, 0})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := strconv.ParseFloat(r.Meta["distance"], 64); r.Value < 0.01 || r.Meta["success"] != "false" || math.Abs(d-r.Value) > 1e-6 {
		t.Errorf("partial beard: value %v meta %v (want a miss at θ = 0.01)", r.Value, r.Meta)
	}
}

func TestBadPointsRejected(t *testing.T) {
	o, _, _ := fakeObjective(t, nil)
	for _, x := range [][]float64{{0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 1.5}, {math.NaN(), 0, 0, 0, 0, 0, 0, 0}} {
		if _, err := o.Evaluate(context.Background(), x); err == nil {
			t.Errorf("x = %v accepted", x)
		}
	}
}

func TestNoFaceFailsTheEvaluation(t *testing.T) {
	// Landmarks mode: only a new best is re-checked by detection.
	o, f, _ := fakeObjective(t, nil)
	f.NoFaces.Store(true)
	_, err := o.Evaluate(context.Background(), []float64{1, 1, 0, 0, 0, 1, 0, 0})
	if !errors.Is(err, ErrNoFace) {
		t.Errorf("landmarks mode, face gone: err = %v, want ErrNoFace", err)
	}
	// Detection on every image.
	o2, f2, _ := fakeObjective(t, map[string]string{"detect": "tiny"})
	if _, err := o2.Evaluate(context.Background(), make([]float64, 8)); err != nil {
		t.Fatal(err)
	}
	f2.NoFaces.Store(true)
	if _, err := o2.Evaluate(context.Background(), []float64{0, 0, 0, 0.4, 0, 0, 0, 0}); !errors.Is(err, ErrNoFace) {
		t.Errorf("tiny mode, face gone: err = %v, want ErrNoFace", err)
	}
}

func TestBestFigureAndSaveAll(t *testing.T) {
	o, _, cfg := fakeObjective(t, map[string]string{"save_dir": filepath.Join(t.TempDir(), "run")})
	xs := [][]float64{{0.2, 0, 0.5, 0, 0, 0, 0, 0.1}, {1, 0, 0, 0, 0, 0, 0, 0}, {0, 0.9, 0, 0, 1, 0, 0, 0}}
	best := math.Inf(1)
	for _, x := range xs {
		r, err := o.EvaluateDetail(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		best = math.Min(best, r.Value)
		if _, err := os.Stat(r.Meta["image"]); err != nil {
			t.Errorf("synthesized image not saved: %v", err)
		}
	}
	// Saved on each improvement, not yet as the end-of-run result.
	if s := readSummary(t, filepath.Join(cfg.SaveDir, "best.json")); s.Final || s.Eval != 2 {
		t.Errorf("best.json during the run: %+v, want eval 2 and final false", s)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if cfg.FigureDir != cfg.SaveDir {
		t.Errorf("figure dir %q, want save_dir %q", cfg.FigureDir, cfg.SaveDir)
	}
	s := readSummary(t, filepath.Join(cfg.SaveDir, "best.json"))
	if s.Distance != best || s.Identity != "row 1" || s.Params["beard"] != 1 || s.Eval != 2 || !s.Final ||
		s.Verified == nil || s.Verified.Distance != best || !s.Success || !s.BelowThreshold {
		t.Errorf("best.json %+v, want the full beard (eval 2, d = %v, re-detected alike), final", s, best)
	}
	fh, err := os.Open(filepath.Join(cfg.SaveDir, "best.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fig, err := png.Decode(fh)
	if err != nil {
		t.Fatal(err)
	}
	if fig.Bounds().Dy() < synth.FigureHeight || fig.Bounds().Dx() < 2*synth.FigureHeight {
		t.Errorf("figure %v too small for three panels", fig.Bounds())
	}
	for i := 1; i <= 3; i++ {
		if _, err := os.Stat(filepath.Join(cfg.SaveDir, "eval-0000"+strconv.Itoa(i)+".png")); err != nil {
			t.Error(err)
		}
	}
}

func readSummary(t *testing.T, path string) summary {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return s
}

func TestConcurrentEvaluations(t *testing.T) {
	o, _, _ := fakeObjective(t, nil)
	a, _ := o.loadAttack(context.Background())
	var wg sync.WaitGroup
	vals := make([]float64, 12)
	evals := make([]int, 12)
	for i := range vals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := []float64{float64(i) / 11, 0, 0, 0, float64(11-i) / 11, 0, 0, 0}
			out, err := a.evaluate(context.Background(), x)
			if err != nil {
				t.Error(err)
				return
			}
			vals[i], evals[i] = out.Distance, out.Eval
		}()
	}
	wg.Wait()
	seen := map[int]bool{}
	min := math.Inf(1)
	for i := range vals {
		seen[evals[i]] = true
		min = math.Min(min, vals[i])
	}
	if len(seen) != 12 || a.currentBest().Distance != min {
		t.Errorf("eval numbers %v, best %v, want 12 distinct numbers and best %v", evals, a.currentBest().Distance, min)
	}
}

// TestSaveFigure: the saved PNG decodes, has the layout of its three
// panels, shows the unedited attacker in panel (a) and the edited face in
// panel (b) (each with its source's mean colour, and different from each
// other), and the grey placeholder in (c) for a descriptor-file gallery.
func TestSaveFigure(t *testing.T) {
	cfg, f := fakeSetup(t)
	a, err := newAttack(context.Background(), cfg, f, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	out, err := a.evaluate(context.Background(), []float64{1, 0, 0, 0, 0, 0, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fig8.png")
	if err := a.SaveFigure(path, out); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fig, err := png.Decode(fh)
	if err != nil {
		t.Fatalf("best figure is not a PNG: %v", err)
	}
	title, panels := a.figure(out)
	l := synth.FigureLayout(title, panels...)
	if fig.Bounds() != (image.Rectangle{Max: l.Size}) || len(l.Images) != 3 {
		t.Fatalf("figure %v with %d panels, want %v with 3", fig.Bounds(), len(l.Images), l.Size)
	}
	orig := a.original
	for i, r := range l.Images[:2] {
		if r.Dy() != synth.FigureHeight || math.Abs(float64(r.Dx())-float64(synth.FigureHeight*orig.Bounds().Dx())/float64(orig.Bounds().Dy())) > 1 {
			t.Errorf("panel %d at %v: want the attacker's aspect ratio at height %d", i, r, synth.FigureHeight)
		}
	}
	for i, src := range []image.Image{orig, out.Image} {
		if got, want := facetest.MeanRGB(fig, l.Images[i]), facetest.MeanRGB(src, src.Bounds()); facetest.MaxAbsDiff(got, want) > 2 {
			t.Errorf("panel %d mean colour %v, its image's %v", i, got, want)
		}
	}
	r0, r1 := l.Images[0], l.Images[1]
	diff := 0
	for y := 0; y < r0.Dy(); y++ {
		for x := 0; x < r0.Dx(); x++ {
			if fig.At(r0.Min.X+x, r0.Min.Y+y) != fig.At(r1.Min.X+x, r1.Min.Y+y) {
				diff++
			}
		}
	}
	if diff < r0.Dx()*r0.Dy()/50 {
		t.Errorf("panels (a) and (b) differ in %d pixels: the edits (beard, glasses) should show", diff)
	}
	r2 := l.Images[2]
	grey := 0
	for y := r2.Min.Y; y < r2.Max.Y; y++ {
		for x := r2.Min.X; x < r2.Max.X; x++ {
			if color.GrayModel.Convert(fig.At(x, y)).(color.Gray) == synth.PlaceholderGrey {
				grey++
			}
		}
	}
	if grey < r2.Dx()*r2.Dy()*95/100 {
		t.Errorf("panel (c) of a descriptor gallery: %d of %d pixels are the placeholder grey", grey, r2.Dx()*r2.Dy())
	}
}

// TestSuccessIsDecidedOnRedetection: in landmarks mode the evaluated
// distance can be below θ while full detection puts the face above it;
// success follows detection, the metadata reports both distances, and
// evaluations below θ are re-checked even when they are not a new best.
func TestSuccessIsDecidedOnRedetection(t *testing.T) {
	o, f, _ := fakeObjective(t, map[string]string{"threshold": "0.1"})
	a, _ := o.loadAttack(context.Background())
	glasses := []float64{0, 0, 0, 0, 0, 0, 1, 0} // gallery row 0 exactly
	meta := func(x []float64) map[string]string {
		t.Helper()
		r, err := o.EvaluateDetail(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		return r.Meta
	}

	// Detection disagrees by 0.15: evaluated 0 < θ, re-detected 0.15 ≥ θ.
	f.SetDetectShift(0.15)
	m := meta(glasses)
	if m["distance"] != "0.000000" || m["below_threshold"] != "true" || m["verified"] != "true" ||
		m["verified_distance"] != "0.150000" || m["success"] != "false" {
		t.Errorf("evaluated 0, re-detected 0.15, θ = 0.1: meta %v, want below_threshold but no success", m)
	}
	best := a.currentBest()
	if best.Success || !best.BelowThreshold || strings.Contains(a.Title(*best), "MATCH") || !strings.Contains(a.Title(*best), "no match") {
		t.Errorf("best %+v titled %q: want no match", best, a.Title(*best))
	}

	// The same edits again: not a new best, but below θ, so re-checked.
	f.SetDetectShift(0.05)
	analyzes := f.Analyzes.Load()
	m = meta(glasses)
	if f.Analyzes.Load() != analyzes+1 || m["verified_distance"] != "0.050000" || m["success"] != "true" {
		t.Errorf("an evaluation below θ (not a new best) must be re-checked: meta %v", m)
	}

	// Above θ and not a new best: not re-checked, so no success claimed.
	analyzes = f.Analyzes.Load()
	m = meta(make([]float64, 8))
	if d, _ := strconv.ParseFloat(m["distance"], 64); d < 0.1 {
		t.Fatalf("the unedited attacker is %v from the gallery; the test needs it above θ = 0.1", d)
	}
	if f.Analyzes.Load() != analyzes || m["verified"] != "false" || m["success"] != "false" || m["below_threshold"] != "false" {
		t.Errorf("unedited attacker above θ: meta %v (%d detections), want no re-check and no success", m, f.Analyzes.Load()-analyzes)
	}
	if _, ok := m["verified_distance"]; ok {
		t.Errorf("verified_distance reported without re-detection: %v", m)
	}
}

// TestRecheck re-evaluates edits with detection without recording them.
func TestRecheck(t *testing.T) {
	o, f, _ := fakeObjective(t, map[string]string{"threshold": "0.1"})
	a, _ := o.loadAttack(context.Background())
	ctx := context.Background()
	if _, err := a.evaluate(ctx, []float64{1, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	before := a.currentBest()
	f.SetDetectShift(0.2)
	// Far above θ and worse than the best: Evaluate would not re-check it.
	r, err := a.Recheck(ctx, make([]float64, 8))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verified == nil || math.Abs(r.Verified.Distance-r.Distance) > 0.2+1e-9 || r.Verified.Distance == r.Distance || r.Eval != 0 {
		t.Errorf("recheck %+v: want a re-detected distance beside the evaluated one", r)
	}
	if a.currentBest() != before {
		t.Errorf("Recheck changed the best: %+v", a.currentBest())
	}
	f.NoFaces.Store(true)
	r, err = a.Recheck(ctx, []float64{0, 0, 0, 0, 0, 0, 1, 0})
	if !errors.Is(err, ErrNoFace) || !r.NoFace || r.Verified != nil || r.Distance != 0 || r.Success || !strings.Contains(a.Title(r), "no face") {
		t.Errorf("no face: %+v, %v; want ErrNoFace with the evaluated distance 0 kept", r, err)
	}
	next, err := a.evaluate(ctx, []float64{0, 0, 0, 0, 0, 0, 0, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if next.Eval != 2 {
		t.Errorf("Recheck consumed evaluation numbers: next is %d, want 2", next.Eval)
	}
}

// TestSetupFailureIsAnError: a set-up that fails after the FRS is up (no
// face in the attacker photo) returns an error and does not panic while
// cleaning up.
func TestSetupFailureIsAnError(t *testing.T) {
	cfg, f := fakeSetup(t)
	f.NoFaces.Store(true)
	a, err := newAttack(context.Background(), cfg, f, zerolog.Nop())
	if err == nil || a != nil || !strings.Contains(err.Error(), "no face found in the attacker photo") {
		t.Errorf("New with no face in the attacker photo: %v, %v", a, err)
	}
}

// A descriptor no gallery face lies at a finite distance from (values
// whose squares overflow) is an error, not an index out of range.
func TestNearestOverflowIsAnError(t *testing.T) {
	huge := make([]float64, frs.DescriptorLen)
	for i := range huge {
		huge[i] = 1e200
	}
	a := &Attack{gallery: &frs.Gallery{Entries: []frs.Entry{{Name: "a", Descriptor: make([]float64, frs.DescriptorLen)}}}}
	if _, err := a.nearest(huge); err == nil || !strings.Contains(err.Error(), "finite distance") {
		t.Fatalf("nearest of an overflowing descriptor: %v", err)
	}
	if m, err := a.nearest(make([]float64, frs.DescriptorLen)); err != nil || m.Identity != "a" {
		t.Fatalf("nearest: %+v, %v", m, err)
	}
}

// An output directory that cannot be made is refused when the attack is
// set up (it was accepted and every save failed, logged only).
func TestUnwritableSaveDirRefused(t *testing.T) {
	cfg, f := fakeSetup(t)
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.SaveDir = filepath.Join(file, "x")
	if _, err := newAttack(context.Background(), cfg, f, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), "save_dir") {
		t.Fatalf("save_dir under a file: %v", err)
	}
}
