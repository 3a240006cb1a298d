package synthetic

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/sdk"
)

var ctx = context.Background()

// writeSurvey writes a tiny log10P-format data set (4×3 grid) into a temp dir.
func writeSurvey(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var xs, ys strings.Builder
	for a := 0; a < 4; a++ {
		for b := 0; b < 3; b++ {
			x1, x2 := float64(a)/3, float64(b)/2
			fmt.Fprintf(&xs, "%.18e %.18e\n", x1, x2)
			fmt.Fprintf(&ys, "%.18e\n", math.Sin(3*x1)-x2)
		}
	}
	files := map[string]string{
		testfunc.Log10PInputsFile:  xs.String(),
		testfunc.Log10POutputsFile: ys.String(),
		testfunc.Log10PHyperFile:   "0.5\n10\n20\n0.03\n",
	}
	for name, s := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestAllServesEveryFunction(t *testing.T) {
	all := All()
	if want := len(testfunc.Names()) + len(testfunc.MultiNames()); len(all) != want {
		t.Fatalf("%d objectives, want %d", len(all), want)
	}
	for _, n := range testfunc.Names() {
		o, ok := all[Prefix+n]
		if !ok {
			t.Fatalf("no objective %s", Prefix+n)
		}
		info, err := o.Info(ctx)
		if err != nil {
			t.Fatalf("%s: Info: %v", n, err)
		}
		if err := info.Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if info.Name != Prefix+n || info.Minimize {
			t.Errorf("%s: Info %+v", n, info)
		}
		if (info.Optimum == nil) != (n == "log10p") {
			t.Errorf("%s: Optimum %v (only unconfigured log10p lacks one)", n, info.Optimum)
		}
	}
}

// Evaluate = EvaluateNoiseFree + √σ²·testfunc.Noise(seed, x), exactly.
func TestNoiseAndSeed(t *testing.T) {
	o, _ := New("hartmann6")
	if err := o.Configure(ctx, map[string]string{"noise_var": "0.25", "seed": "17"}); err != nil {
		t.Fatal(err)
	}
	x := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6}
	y, err := o.Evaluate(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	f, err := o.EvaluateNoiseFree(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	if want := f + 0.5*testfunc.Noise(17, x); y != want {
		t.Errorf("Evaluate = %.17g, want %.17g", y, want)
	}
	if y2, _ := o.Evaluate(ctx, x); y2 != y {
		t.Error("Evaluate is not deterministic")
	}
	// A negative study seed is read as its two's complement.
	if err := o.Configure(ctx, map[string]string{"noise_var": "0.25", "seed": "-1"}); err != nil {
		t.Fatal(err)
	}
	if y3, _ := o.Evaluate(ctx, x); y3 != f+0.5*testfunc.Noise(math.MaxUint64, x) {
		t.Error("seed -1 is not 2^64−1")
	}
	// Defaults: the paper's σ² = 1e-4 and seed 0 (also when the host sends "").
	if err := o.Configure(ctx, map[string]string{"noise_var": "", "seed": ""}); err != nil {
		t.Fatal(err)
	}
	if nv, _ := o.currentNoiseVar(); nv != 1e-4 {
		t.Errorf("default noise variance %g, want 1e-4", nv)
	}
	if y4, _ := o.Evaluate(ctx, x); y4 != f+0.01*testfunc.Noise(0, x) {
		t.Error("default seed is not 0")
	}
}

func TestFunctionParams(t *testing.T) {
	o, _ := New("ackley")
	if err := o.Configure(ctx, map[string]string{"dim": "5", "seed": "1", "noise_var": "0"}); err != nil {
		t.Fatal(err)
	}
	info, _ := o.Info(ctx)
	if info.Dim() != 5 || info.Params[4].Name != "x5" || info.Params[0].Low != -32.768 {
		t.Errorf("ackley dim=5 Info: %+v", info)
	}
	if v, err := o.Evaluate(ctx, make([]float64, 5)); err != nil || v != 0 {
		t.Errorf("ackley(0) = %g, %v; want 0", v, err)
	}

	g, _ := New("gpsample")
	if err := g.Configure(ctx, map[string]string{"sample_seed": "3", "seed": "9"}); err != nil {
		t.Fatal(err)
	}
	info, _ = g.Info(ctx)
	if *info.Optimum != testfunc.GPSample(3).Optimum || info.Params[1].High != 10 {
		t.Errorf("gpsample sample_seed=3 Info: %+v", info)
	}

	l, _ := New("log10p")
	if _, err := l.Evaluate(ctx, []float64{0.5, 0.5}); err == nil || !strings.Contains(err.Error(), "data") {
		t.Errorf("unconfigured log10p: %v, want an error asking for data", err)
	}
	dir := writeSurvey(t)
	if err := l.Configure(ctx, map[string]string{"data": dir, "seed": "1"}); err != nil {
		t.Fatal(err)
	}
	info, _ = l.Info(ctx)
	fn, _ := testfunc.Log10P(dir)
	if info.Optimum == nil || *info.Optimum != fn.Optimum {
		t.Errorf("log10p Info.Optimum %v, want %g", info.Optimum, fn.Optimum)
	}
	if nv, _ := l.currentNoiseVar(); nv != 0.03 {
		t.Errorf("log10p default noise variance %g, want the data set's 0.03", nv)
	}
}

// A BBOB function takes dim and instance; the instance selects
// testfunc.BBOB's instance, and the default is instance 1.
func TestBBOBParams(t *testing.T) {
	o, err := New("bbob-f21")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.Keys(), ","); got != "dim,instance,noise_var,seed" {
		t.Errorf("bbob-f21 keys %s", got)
	}
	if err := o.Configure(ctx, map[string]string{"dim": "5", "instance": "7", "noise_var": "0"}); err != nil {
		t.Fatal(err)
	}
	want, _ := testfunc.BBOB(21, 5, 7)
	info, _ := o.Info(ctx)
	if info.Dim() != 5 || *info.Optimum != want.Optimum || info.Params[0].Low != -5 || info.Params[0].High != 5 {
		t.Errorf("bbob-f21 dim=5 instance=7 Info: %+v, want f* %g", info, want.Optimum)
	}
	if v, err := o.Evaluate(ctx, want.Maximizers[0]); err != nil || v != want.Optimum {
		t.Errorf("bbob-f21 at its maximizer: %g, %v; want %g", v, err, want.Optimum)
	}
	if err := o.Configure(ctx, map[string]string{"dim": "5"}); err != nil {
		t.Fatal(err)
	}
	one, _ := testfunc.BBOB(21, 5, 1)
	if info, _ := o.Info(ctx); *info.Optimum != one.Optimum {
		t.Errorf("default instance: f* %g, want instance 1's %g", *info.Optimum, one.Optimum)
	}
	if got := strings.Join(must(New("powell")).Keys(), ","); got != "dim,noise_var,seed" {
		t.Errorf("powell keys %s", got)
	}
}

func must(o *Objective, err error) *Objective {
	if err != nil {
		panic(err)
	}
	return o
}

func TestBadParams(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]string
	}{
		{"branin", map[string]string{"dim": "3"}},
		{"branin", map[string]string{"colour": "red"}},
		{"branin", map[string]string{"sample_seed": "2"}},
		{"branin", map[string]string{"data": "/tmp"}},
		{"branin", map[string]string{"noise_var": "-1"}},
		{"branin", map[string]string{"noise_var": "NaN"}},
		{"branin", map[string]string{"noise_var": "+Inf"}},
		{"branin", map[string]string{"noise_var": "lots"}},
		{"branin", map[string]string{"seed": "1.5"}},
		{"ackley", map[string]string{"dim": "0"}},
		{"ackley", map[string]string{"dim": "two"}},
		{"rosenbrock", map[string]string{"dim": "1"}},
		{"gpsample", map[string]string{"sample_seed": "x"}},
		{"log10p", map[string]string{"data": "/nonexistent"}},
		{"log10p", map[string]string{}},
		{"ackley", map[string]string{"instance": "2"}},
		{"bbob-f3", map[string]string{"instance": "0"}},
		{"bbob-f3", map[string]string{"instance": "-2"}},
		{"bbob-f3", map[string]string{"instance": "first"}},
		{"bbob-f3", map[string]string{"dim": "1"}},
		{"powell", map[string]string{"dim": "6"}},
	}
	for _, c := range cases {
		o, _ := New(c.name)
		if err := o.Configure(ctx, c.params); err == nil {
			t.Errorf("%s %v: want an error", c.name, c.params)
		} else {
			t.Logf("%s %v: %v", c.name, c.params, err)
		}
	}
	if _, err := New("nosuch"); err == nil {
		t.Error("New(nosuch): want an error")
	}
	o, _ := New("branin")
	for _, x := range [][]float64{{0.5}, {math.NaN(), 0.5}, {0.5, 2}} {
		if _, err := o.Evaluate(ctx, x); err == nil {
			t.Errorf("Evaluate(%v): want an error", x)
		}
		if _, err := o.EvaluateNoiseFree(ctx, x); err == nil {
			t.Errorf("EvaluateNoiseFree(%v): want an error", x)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := o.Evaluate(cancelled, []float64{0.5, 0.5}); err == nil {
		t.Error("Evaluate with a cancelled context: want an error")
	}
}

func TestFromFunction(t *testing.T) {
	fn := testfunc.Branin()
	o := fromFunction(fn, 0.04, 5)
	x := []float64{0.3, 0.3}
	y, err := o.Evaluate(ctx, x)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := fn.Eval(x)
	if y != f+0.2*testfunc.Noise(5, x) {
		t.Errorf("FromFunction Evaluate = %g", y)
	}
	info, _ := o.Info(ctx)
	if info.Name != "branin" || *info.Optimum != fn.Optimum {
		t.Errorf("Info %+v", info)
	}
	if err := o.Configure(ctx, map[string]string{"dim": "2"}); err == nil {
		t.Error("FromFunction accepted dim")
	}
}

// Concurrent Evaluate and Configure calls are safe and every Evaluate sees
// one whole configuration.
func TestConcurrentUse(t *testing.T) {
	var o sdk.Objective = All()[Prefix+"gpsample"]
	c := o.(sdk.Configurable)
	x := []float64{4, 4}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if g == 0 && i%10 == 0 {
					if err := c.Configure(ctx, map[string]string{"noise_var": "0"}); err != nil {
						t.Error(err)
					}
				}
				if _, err := o.Evaluate(ctx, x); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
}

// synthetic/gpsample without sample_seed is draw 0: its declared f* is the
// value testfunc's regression pin (TestGPSamplePinned) fixes for seed 0.
func TestGPSampleDefaultDraw(t *testing.T) {
	o, err := New("gpsample")
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Configure(ctx, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	info, err := o.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const pinned = 4.4760810409385066
	if info.Optimum == nil || math.Abs(*info.Optimum-pinned) > 1e-9 {
		t.Fatalf("default gpsample f* = %v, want draw 0's %.17g", info.Optimum, pinned)
	}
	if *info.Optimum != testfunc.GPSample(0).Optimum {
		t.Fatalf("default draw's f* %.17g differs from GPSample(0)'s %.17g", *info.Optimum, testfunc.GPSample(0).Optimum)
	}
}
