package testfunc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realLog10PDir is the directory of the paper's Broom's Barn data, named
// by $TESBO_LOG10P_DATA. The data is optional reference data kept outside
// the repository (it is not part of a clone), so the tests that read it
// skip without it; the synthetic survey below covers the same code.
var realLog10PDir = os.Getenv("TESBO_LOG10P_DATA")

// haveRealLog10P reports whether the real data set is present.
func haveRealLog10P() bool {
	if realLog10PDir == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(realLog10PDir, Log10PInputsFile))
	return err == nil
}

// log10pData is a small survey in the format of the paper's release.
type log10pData struct {
	X     [][]float64
	y     []float64
	hyper []float64 // σ_s², 1/ℓ₁², 1/ℓ₂², σ_n²
}

// syntheticLog10P builds a 6×5 grid survey with two locations missing (like
// the real one's gaps), outputs from a smooth field plus a little jitter,
// and hyper-parameters that make a bumpy posterior mean.
func syntheticLog10P() log10pData {
	rng := rand.New(rand.NewPCG(11, 12))
	var d log10pData
	for a := 0; a < 6; a++ {
		for b := 0; b < 5; b++ {
			if (a == 2 && b == 3) || (a == 5 && b == 0) {
				continue
			}
			x := []float64{float64(a) / 5, float64(b) / 4}
			d.X = append(d.X, x)
			d.y = append(d.y, math.Sin(5*x[0])*math.Cos(4*x[1])+0.1*rng.NormFloat64())
		}
	}
	d.hyper = []float64{0.5, 30, 50, 1e-2}
	return d
}

// write writes the three files into dir in the release's format.
func (d log10pData) write(t testing.TB, dir string) {
	t.Helper()
	var xs, ys, hs strings.Builder
	for i, x := range d.X {
		fmt.Fprintf(&xs, "%.18e %.18e\n", x[0], x[1])
		fmt.Fprintf(&ys, "%.18e\n", d.y[i])
	}
	for _, h := range d.hyper {
		fmt.Fprintf(&hs, "%.18e\n", h)
	}
	for name, s := range map[string]string{
		Log10PInputsFile: xs.String(), Log10POutputsFile: ys.String(), Log10PHyperFile: hs.String(),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// syntheticLog10PFunc writes the synthetic survey to a temp dir and loads it.
func syntheticLog10PFunc(t testing.TB) *Function {
	t.Helper()
	dir := t.TempDir()
	syntheticLog10P().write(t, dir)
	fn, err := Log10P(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// allFunctions returns every function family at representative settings,
// keyed by a descriptive label.
func allFunctions(t testing.TB) map[string]*Function {
	t.Helper()
	fs := map[string]*Function{
		"branin":       Branin(),
		"hartmann3":    Hartmann3(),
		"hartmann4":    hartmann4(),
		"hartmann6":    Hartmann6(),
		"sixhumpcamel": sixHumpCamel(),
		"gpsample/0":   GPSample(0),
		"gpsample/7":   GPSample(7),
		"log10p/synth": syntheticLog10PFunc(t),
		// BoTorch's functions beyond the classics.
		"shekel":         shekel(),
		"cosine8":        cosine8(),
		"beale":          beale(),
		"bukin":          bukin(),
		"dropwave":       dropWave(),
		"eggholder":      eggHolder(),
		"holdertable":    holderTable(),
		"threehumpcamel": threeHumpCamel(),
	}
	if haveRealLog10P() {
		fn, err := Log10P(realLog10PDir)
		if err != nil {
			t.Fatal(err)
		}
		fs["log10p/real"] = fn
	}
	for _, d := range []int{1, 2, 5, 10} {
		for name, mk := range map[string]func(int) (*Function, error){
			"ackley": ackley, "levy": levy, "rosenbrock": rosenbrock,
			"michalewicz": michalewicz, "styblinskitang": styblinskiTang,
			"griewank": griewank, "rastrigin": rastrigin, "dixonprice": dixonPrice,
		} {
			if name == "rosenbrock" && d == 1 {
				continue
			}
			fn, err := mk(d)
			if err != nil {
				t.Fatal(err)
			}
			fs[fmt.Sprintf("%s/d=%d", name, d)] = fn
		}
	}
	for _, d := range []int{4, 8} {
		fn, err := powell(d)
		if err != nil {
			t.Fatal(err)
		}
		fs[fmt.Sprintf("powell/d=%d", d)] = fn
	}
	return fs
}

// uniform draws a point uniformly from fn's domain.
func uniform(rng *rand.Rand, fn *Function) []float64 {
	x := make([]float64, fn.Dim)
	for j := range x {
		x[j] = fn.Lower[j] + rng.Float64()*(fn.Upper[j]-fn.Lower[j])
	}
	return x
}

func mustEval(t testing.TB, fn *Function, x []float64) float64 {
	t.Helper()
	v, err := fn.Eval(x)
	if err != nil {
		t.Fatalf("%s: Eval(%v): %v", fn.Name, x, err)
	}
	return v
}
