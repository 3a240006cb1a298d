package testfunc

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// naiveMean computes the GP posterior mean k(x,X)ᵀ(K + σ_n² I)⁻¹y with a
// general LU solve and the kernel written out, independently of gpMean.
func naiveMean(d log10pData, x []float64) float64 {
	n := len(d.X)
	k := func(a, b []float64) float64 {
		return d.hyper[0] * math.Exp(-0.5*(d.hyper[1]*(a[0]-b[0])*(a[0]-b[0])+d.hyper[2]*(a[1]-b[1])*(a[1]-b[1])))
	}
	K := mat.NewDense(n, n, nil)
	for i := range d.X {
		for j := range d.X {
			K.Set(i, j, k(d.X[i], d.X[j]))
		}
		K.Set(i, i, K.At(i, i)+d.hyper[3])
	}
	var alpha mat.VecDense
	if err := alpha.SolveVec(K, mat.NewVecDense(n, d.y)); err != nil {
		panic(err)
	}
	var m float64
	for i := range d.X {
		m += k(x, d.X[i]) * alpha.AtVec(i)
	}
	return m
}

func TestLog10PMatchesNaivePosteriorMean(t *testing.T) {
	d := syntheticLog10P()
	dir := t.TempDir()
	d.write(t, dir)
	fn, err := Log10P(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fn.NoiseVar != d.hyper[3] {
		t.Errorf("NoiseVar = %g, want the file's %g", fn.NoiseVar, d.hyper[3])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 50; i++ {
		x := uniform(rng, fn)
		if got, want := mustEval(t, fn, x), naiveMean(d, x); math.Abs(got-want) > 1e-10 {
			t.Errorf("f(%v) = %.15g, naive posterior mean %.15g", x, got, want)
		}
	}
}

// With the real survey (when $TESBO_LOG10P_DATA names it): the paper's
// hyper-parameters are read, and f* bounds samples and local maxima (the
// common tests cover it too; this one logs the figures).
func TestLog10PRealData(t *testing.T) {
	if !haveRealLog10P() {
		t.Skipf("optional reference data not found (set TESBO_LOG10P_DATA to the Broom's Barn directory to run this check): %q", realLog10PDir)
	}
	fn, err := Log10P(realLog10PDir)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(fn.NoiseVar-2.511e-2) > 1e-5 {
		t.Errorf("NoiseVar = %g, want the paper's 2.511e-2", fn.NoiseVar)
	}
	X, err := readTable(filepath.Join(realLog10PDir, Log10PInputsFile), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(X) != 433 {
		t.Errorf("%d locations, want 433", len(X))
	}
	t.Logf("log10P: f* = %.12g at x* = %v (n = %d, σ_n² = %g)", fn.Optimum, fn.Maximizers[0], len(X), fn.NoiseVar)
}

func TestLog10PBadData(t *testing.T) {
	good := syntheticLog10P()
	cases := map[string]func(dir string){
		"missing X":   func(dir string) { os.Remove(filepath.Join(dir, Log10PInputsFile)) },
		"missing Y":   func(dir string) { os.Remove(filepath.Join(dir, Log10POutputsFile)) },
		"missing hyp": func(dir string) { os.Remove(filepath.Join(dir, Log10PHyperFile)) },
		"3 columns": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10PInputsFile), []byte("0.1 0.2 0.3\n0.4 0.5 0.6\n"), 0o644)
		},
		"ragged": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10PInputsFile), []byte("0.1 0.2\n0.4\n"), 0o644)
		},
		"NaN": func(dir string) {
			b, _ := os.ReadFile(filepath.Join(dir, Log10POutputsFile))
			s := "NaN\n" + strings.SplitN(string(b), "\n", 2)[1]
			os.WriteFile(filepath.Join(dir, Log10POutputsFile), []byte(s), 0o644)
		},
		"text": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10PHyperFile), []byte("0.5\nabc\n30\n0.01\n"), 0o644)
		},
		"row mismatch": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10POutputsFile), []byte("0.1\n0.2\n"), 0o644)
		},
		"3 hyper": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10PHyperFile), []byte("0.5\n30\n50\n"), 0o644)
		},
		"negative hyper": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10PHyperFile), []byte("0.5\n-30\n50\n0.01\n"), 0o644)
		},
		"outside unit square": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10PInputsFile), []byte("0.1 1.5\n"), 0o644)
			os.WriteFile(filepath.Join(dir, Log10POutputsFile), []byte("0.1\n"), 0o644)
		},
		"empty": func(dir string) {
			os.WriteFile(filepath.Join(dir, Log10PInputsFile), nil, 0o644)
			os.WriteFile(filepath.Join(dir, Log10POutputsFile), nil, 0o644)
		},
	}
	for name, spoil := range cases {
		dir := t.TempDir()
		good.write(t, dir)
		spoil(dir)
		if _, err := Log10P(dir); err == nil {
			t.Errorf("%s: want an error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if _, err := Log10P(""); err == nil || !strings.Contains(err.Error(), "data") {
		t.Errorf("no directory: %v, want an error naming the data parameter", err)
	}
}

func BenchmarkLog10PEval(b *testing.B) {
	if !haveRealLog10P() {
		b.Skip("real data absent")
	}
	fn, err := Log10P(realLog10PDir)
	if err != nil {
		b.Fatal(err)
	}
	x := []float64{0.3, 0.6}
	for b.Loop() {
		fn.Eval(x)
	}
}

// BenchmarkLog10PLoad measures reading the survey, the Cholesky solve and the
// f* search.
func BenchmarkLog10PLoad(b *testing.B) {
	if !haveRealLog10P() {
		b.Skip("real data absent")
	}
	for b.Loop() {
		if _, err := Log10P(realLog10PDir); err != nil {
			b.Fatal(err)
		}
	}
}
