package loader

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/sdk"
)

func TestExecutableObjective(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"objective"}, nil), Options{})
	ctx := ctxT(t)
	list := r.List(ctx)
	if len(list) != 1 {
		t.Fatalf("List = %+v, want one plugin", list)
	}
	p := list[0]
	if p.Name != "objective" || p.Kind != KindObjective || p.Source != SourceExecutable || p.Err != nil || p.Info == nil {
		t.Fatalf("plugin = %+v", p)
	}
	if p.Info.Name != "quadratic" || len(p.Info.Params) != 2 || p.Info.Optimum == nil || *p.Info.Optimum != 0 {
		t.Fatalf("info = %+v", *p.Info)
	}
	if len(p.SHA256) != 64 {
		t.Fatalf("sha256 = %q", p.SHA256)
	}
	o, err := r.Objective(ctx, "objective")
	if err != nil {
		t.Fatal(err)
	}
	if !o.SupportsConfigure() || !o.SupportsDetail() || !o.SupportsNoiseFree() {
		t.Fatalf("caps %v %v %v, want all", o.SupportsConfigure(), o.SupportsDetail(), o.SupportsNoiseFree())
	}
	for _, tc := range []struct{ x, y []float64 }{{[]float64{0.3, 0.7}, nil}, {[]float64{0, 0}, nil}, {[]float64{1, 0.2}, nil}} {
		want := -(tc.x[0]-0.3)*(tc.x[0]-0.3) - (tc.x[1]-0.7)*(tc.x[1]-0.7)
		got, err := o.Evaluate(ctx, tc.x)
		if err != nil || got != want {
			t.Fatalf("Evaluate(%v) = %v, %v; want %v", tc.x, got, err, want)
		}
	}
	if err := o.Configure(ctx, map[string]string{"offset": "5", "seed": "1", "noise_var": "0"}); err != nil {
		t.Fatal(err)
	}
	if got, err := o.EvaluateNoiseFree(ctx, []float64{0.3, 0.7}); err != nil || got != 5 {
		t.Fatalf("EvaluateNoiseFree after Configure = %v, %v; want 5", got, err)
	}
	// Info follows the parameters (f* = offset here; a dimension or a BBOB
	// instance elsewhere): it is fetched again after Configure.
	if info, err := o.Info(ctx); err != nil || info.Optimum == nil || *info.Optimum != 5 {
		t.Fatalf("Info after Configure = %+v, %v; want f* = 5", info, err)
	}
	res, err := o.EvaluateDetail(ctx, []float64{0.3, 0.7})
	if err != nil || res.Value != 5 {
		t.Fatalf("EvaluateDetail = %+v, %v", res, err)
	}
	if pid, err := strconv.Atoi(res.Meta["pid"]); err != nil || pid <= 0 || pid == os.Getpid() {
		t.Fatalf("meta = %v: want the plugin's pid", res.Meta)
	}
	// Wrong dimension and non-finite input never reach the plugin.
	if _, err := o.Evaluate(ctx, []float64{1}); !errors.Is(err, ErrBadInput) {
		t.Fatalf("1-d point: err = %v, want ErrBadInput", err)
	}
	if _, err := o.Evaluate(ctx, []float64{math.NaN(), 0}); !errors.Is(err, ErrBadInput) {
		t.Fatalf("NaN point: err = %v, want ErrBadInput", err)
	}
	// The handle is an sdk.Objective the host can use like any other.
	var _ sdk.Objective = o
}

func TestMultiObjectivePlugin(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"multi"}, nil), Options{})
	ctx := ctxT(t)
	list := r.List(ctx)
	var names []string
	for _, p := range list {
		if p.Err != nil || p.Unit != "multi" || p.Kind != KindObjective {
			t.Fatalf("plugin %+v", p)
		}
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "multi/down,multi/up" {
		t.Fatalf("names = %v", names)
	}
	for name, slope := range map[string]float64{"multi/up": 2, "multi/down": -3} {
		o, err := r.Objective(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := o.Evaluate(ctx, []float64{0.5}); err != nil || got != slope*0.5 {
			t.Fatalf("%s(0.5) = %v, %v; want %v", name, got, err, slope*0.5)
		}
	}
	if _, err := r.Objective(ctx, "multi"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "multi/up") {
		t.Fatalf("Objective(multi) err = %v; want a list of its objectives", err)
	}
	if _, err := r.Objective(ctx, "nosuch"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Objective(nosuch) err = %v", err)
	}
}

// TestGoSourceDir builds a Go main-package directory inside this module on
// first use (resolving github.com/tesbo/tesbo/sdk through the enclosing
// go.mod) and caches the binary by source hash; a broken one reports the
// compiler's file:line and does not hide the healthy one.
func TestGoSourceDir(t *testing.T) {
	cache := t.TempDir()
	dir := pluginsDir(t, nil, map[string]string{
		"objective":   "testdata/plugins/objective",
		"brokenbuild": "testdata/plugins/brokenbuild",
	})
	r := open(t, dir, Options{CacheDir: cache})
	ctx := ctxT(t)
	list := r.List(ctx)
	if len(list) != 2 {
		t.Fatalf("List = %+v", list)
	}
	broken, good := list[0], list[1]
	if good.Name != "objective" || good.Source != SourceGoDir || good.Err != nil || good.Info == nil {
		t.Fatalf("good = %+v", good)
	}
	if broken.Name != "brokenbuild" || !errors.Is(broken.Err, ErrBuild) {
		t.Fatalf("broken = %+v", broken)
	}
	if msg := broken.Err.Error(); !strings.Contains(msg, "main.go:8") || !strings.Contains(msg, "undefinedObjective") {
		t.Fatalf("build error lacks the compiler's file:line: %v", msg)
	}
	o, err := r.Objective(ctx, "objective")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := o.Evaluate(ctx, []float64{0.3, 0.7}); err != nil || got != 0 {
		t.Fatalf("Evaluate = %v, %v", got, err)
	}
	bins, _ := filepath.Glob(filepath.Join(cache, "objective-*", "objective"))
	if len(bins) != 1 {
		t.Fatalf("cache holds %v, want one binary", bins)
	}
	st, _ := os.Stat(bins[0])
	r.Close()

	// Same sources: the cached binary is reused, not rebuilt.
	r2 := open(t, dir, Options{CacheDir: cache})
	if _, err := r2.Objective(ctx, "objective"); err != nil {
		t.Fatal(err)
	}
	st2, _ := os.Stat(bins[0])
	if !st2.ModTime().Equal(st.ModTime()) {
		t.Fatal("binary rebuilt although the sources did not change")
	}
}

// TestGoSourceDirCacheKeyIgnoresPathSpelling: one plugin directory named
// relatively (run's default --plugins ./plugins) and absolutely (the path
// resume takes from the stored study) is one cache entry. The key used to
// hash the relative spelling's files by base name only, so a resumed
// study rebuilt a plugin its run had just built.
func TestGoSourceDirCacheKeyIgnoresPathSpelling(t *testing.T) {
	r := open(t, t.TempDir(), Options{CacheDir: t.TempDir()})
	ctx := ctxT(t)
	rel := filepath.Join("testdata", "plugins", "objective") // tests run in the package directory
	abs, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	relBin, err := r.build(ctx, &unit{r: r, name: "objective", path: rel})
	if err != nil {
		t.Fatal(err)
	}
	absBin, err := r.build(ctx, &unit{r: r, name: "objective", path: abs})
	if err != nil {
		t.Fatal(err)
	}
	if relBin != absBin {
		t.Fatalf("%s and %s built twice: %s and %s", rel, abs, relBin, absBin)
	}
}

func TestGoSourceDirNeedsGo(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{"objective": "testdata/plugins/objective"})
	r := open(t, dir, Options{CacheDir: t.TempDir(), GoCmd: filepath.Join(t.TempDir(), "no-go-here")})
	_, err := r.Objective(ctxT(t), "objective")
	if !errors.Is(err, ErrNoGo) || !strings.Contains(err.Error(), "install Go") {
		t.Fatalf("err = %v, want ErrNoGo with advice", err)
	}
}

// TestGoSourceDirOutsideModule reports a Go plugin directory outside any
// module with the commands that fix it.
func TestGoSourceDirOutsideModule(t *testing.T) {
	src := t.TempDir() // under $TMPDIR, outside any go.mod
	if findGoMod(src) != "" {
		t.Skip("the temporary directory is inside a Go module")
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := open(t, pluginsDir(t, nil, map[string]string{"lonely": src}), Options{CacheDir: t.TempDir()})
	_, err := r.Objective(ctxT(t), "lonely")
	wantErr(t, err, "lonely", ErrBuild, "not inside a Go module", "go mod init",
		"go mod edit -replace github.com/tesbo/tesbo=", "go get github.com/tesbo/tesbo/sdk")
}

func TestScriptObjective(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{"quad.go": "testdata/scripts/objective.go"}), Options{})
	ctx := ctxT(t)
	list := r.List(ctx)
	if len(list) != 1 || list[0].Err != nil || list[0].Source != SourceScript || list[0].Kind != KindObjective {
		t.Fatalf("List = %+v", list)
	}
	if info := list[0].Info; info.Name != "QUAD" || info.Params[1].Kind != sdk.LogFloat {
		t.Fatalf("info = %+v", info)
	}
	o, err := r.Objective(ctx, "quad")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range [][]float64{{0.3, 0.7}, {0.9, 0.05}} {
		want := -(x[0]-0.3)*(x[0]-0.3) - (x[1]-0.7)*(x[1]-0.7)
		if got, err := o.Evaluate(ctx, x); err != nil || got != want {
			t.Fatalf("Evaluate(%v) = %v, %v; want %v", x, got, err, want)
		}
	}
}

// TestScriptDirectory loads a script spread over several files.
func TestScriptDirectory(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{"twofiles": "testdata/scripts/dirscript"}), Options{})
	ctx := ctxT(t)
	list := r.List(ctx)
	if len(list) != 1 || list[0].Err != nil || list[0].Source != SourceScript || list[0].Info.Name != "two files" {
		t.Fatalf("List = %+v", list)
	}
	o, err := r.Objective(ctx, "twofiles")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := o.Evaluate(ctx, []float64{7}); err != nil || v != 49 {
		t.Fatalf("Evaluate(7) = %v, %v", v, err)
	}
}

func TestAcquisitionScriptAndPlugin(t *testing.T) {
	dir := pluginsDir(t, []string{"acquisition"}, map[string]string{"ucbscript.go": "testdata/scripts/acq.go"})
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	for _, p := range r.List(ctx) {
		if p.Err != nil || p.Kind != KindAcquisition {
			t.Fatalf("plugin %+v", p)
		}
	}
	batch := [][]float64{{0.1, 0.2}, {0.9, 0.4}, {0, 1}}
	for name, extra := range map[string]float64{"acquisition": 0, "ucbscript": float64(testPost.dim)} {
		a, err := r.Acquisition(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		f := a.Prepare(testPost)
		for q := 1; q <= len(batch); q++ {
			got, err := f.Score(ctx, batch[:q])
			want := wantUCB(testPost, batch[:q]) + extra
			if err != nil || math.Abs(got-want) > 1e-12 {
				t.Fatalf("%s: Score(q=%d) = %v, %v; want %v", name, q, got, err, want)
			}
		}
		f.Close()
		if _, err := f.Score(ctx, batch); !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "closed") {
			t.Fatalf("%s: Score after Close: err = %v, want an error about the closed ScoreFunc", name, err)
		}
		// The one-shot form.
		if got, err := a.Score(ctx, testPost, batch[:1]); err != nil || math.Abs(got-wantUCB(testPost, batch[:1])-extra) > 1e-12 {
			t.Fatalf("%s: Score = %v, %v", name, got, err)
		}
		if _, err := a.Score(ctx, testPost, [][]float64{{0.5, 1.5}}); !errors.Is(err, ErrBadInput) {
			t.Fatalf("%s: point outside the unit cube: err = %v", name, err)
		}
	}
	if _, err := r.Objective(ctx, "acquisition"); !errors.Is(err, ErrWrongKind) {
		t.Fatalf("Objective(acquisition) err = %v, want ErrWrongKind", err)
	}
}

func TestSuggester(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"suggester"}, nil), Options{})
	ctx := ctxT(t)
	s, err := r.Suggester(ctx, "suggester")
	if err != nil {
		t.Fatal(err)
	}
	info := sdk.Info{Params: []sdk.Param{{Name: "a", Low: 0, High: 4}, {Name: "b", Kind: sdk.Int, Low: -2, High: 2}}}
	pts, err := s.Suggest(ctx, sdk.SuggestRequest{Objective: info, Count: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{1, -1}, {2, 0}, {3, 1}}
	for i := range want {
		for j := range want[i] {
			if pts[i][j] != want[i][j] {
				t.Fatalf("points = %v, want %v", pts, want)
			}
		}
	}
	hist := []sdk.Observation{{X: []float64{3.5, 2}, Value: 1}}
	pts, err = s.Suggest(ctx, sdk.SuggestRequest{Objective: info, History: hist, Count: 2})
	if err != nil || pts[0][0] != 3.5 || pts[0][1] != 2 {
		t.Fatalf("with history: %v, %v", pts, err)
	}
	// A suggestion outside the space is refused.
	hist[0].X = []float64{9, 0}
	if _, err := s.Suggest(ctx, sdk.SuggestRequest{Objective: info, History: hist, Count: 2}); !errors.Is(err, ErrBadOutput) {
		t.Fatalf("out-of-space suggestion: err = %v, want ErrBadOutput", err)
	}
}

// The build cache keeps the keptBuilds most recently used builds of a
// plugin and nothing of other plugins or other files is touched.
func TestPruneBuilds(t *testing.T) {
	dir := t.TempDir()
	hexOf := func(i int) string { return fmt.Sprintf("%024x", i) }
	base := time.Now().Add(-time.Hour)
	mk := func(name string, age int) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		at := base.Add(-time.Duration(age) * time.Minute)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var syn []string
	for age := range 5 {
		syn = append(syn, mk("syn-"+hexOf(age), age)) // syn[0] is the newest
	}
	others := []string{mk("syn-thetic-"+hexOf(9), 50), mk("other-"+hexOf(1), 60), mk("syn-notahash", 70)}
	if n := pruneBuilds(dir, "syn", 3); n != 2 {
		t.Fatalf("removed %d, want 2", n)
	}
	for i, p := range syn {
		_, err := os.Stat(p)
		if kept := err == nil; kept != (i < 3) {
			t.Errorf("build %d (age %d min): kept %v", i, i, kept)
		}
	}
	for _, p := range others {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
}
