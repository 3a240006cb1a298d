package attack

import (
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tesbo/tesbo/plugins/facerec/frs"
	"github.com/tesbo/tesbo/plugins/facerec/synth"
	"github.com/tesbo/tesbo/sdk"
)

func fakeObjective(t *testing.T, extra map[string]string) (*Objective, *fakeFRS, Config) {
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
	a, _ := o.Attack(context.Background())
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
	a, _ := o.Attack(context.Background())
	r, err := o.EvaluateDetail(context.Background(), make([]float64, 8))
	if err != nil {
		t.Fatal(err)
	}
	if r.Value != a.Unedited().Distance || r.Meta["identity"] != a.Unedited().Identity {
		t.Errorf("zero edits: %v %v, unedited %+v", r.Value, r.Meta, a.Unedited())
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
	f.noFaces.Store(true)
	_, err := o.Evaluate(context.Background(), []float64{1, 1, 0, 0, 0, 1, 0, 0})
	if !errors.Is(err, ErrNoFace) {
		t.Errorf("landmarks mode, face gone: err = %v, want ErrNoFace", err)
	}
	// Detection on every image.
	o2, f2, _ := fakeObjective(t, map[string]string{"detect": "tiny"})
	if _, err := o2.Evaluate(context.Background(), make([]float64, 8)); err != nil {
		t.Fatal(err)
	}
	f2.noFaces.Store(true)
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
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	var s Summary
	if cfg.FigureDir != cfg.SaveDir {
		t.Errorf("figure dir %q, want save_dir %q", cfg.FigureDir, cfg.SaveDir)
	}
	b, err := os.ReadFile(filepath.Join(cfg.SaveDir, "best.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Distance != best || s.Identity != "row 1" || s.Params["beard"] != 1 || s.Eval != 2 {
		t.Errorf("best.json %+v, want the full beard (eval 2, d = %v)", s, best)
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

func TestConcurrentEvaluations(t *testing.T) {
	o, _, _ := fakeObjective(t, nil)
	a, _ := o.Attack(context.Background())
	var wg sync.WaitGroup
	vals := make([]float64, 12)
	evals := make([]int, 12)
	for i := range vals {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := []float64{float64(i) / 11, 0, 0, 0, float64(11-i) / 11, 0, 0, 0}
			out, err := a.Evaluate(context.Background(), x)
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
	if len(seen) != 12 || a.Best().Distance != min {
		t.Errorf("eval numbers %v, best %v, want 12 distinct numbers and best %v", evals, a.Best().Distance, min)
	}
}

func TestSaveFigure(t *testing.T) {
	cfg, f := fakeSetup(t)
	a, err := New(context.Background(), cfg, f, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	out, err := a.Evaluate(context.Background(), []float64{0, 0, 0, 0, 0, 0, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "fig8.png")
	if err := a.SaveFigure(path, out); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
