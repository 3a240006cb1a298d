package host

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
)

// ψ_λ⁻¹(ψ_λ(x)) = x on both sides of 0, including the special λ = 0 and 2.
func TestYeoJohnsonInverse(t *testing.T) {
	for _, lam := range []float64{-1.5, 0, 0.5, 1, 1.7, 2, 3.5} {
		for _, x := range []float64{-40, -3, -0.2, 0, 0.3, 2, 25} {
			z := yeoJohnson(x, lam)
			if got := yeoJohnsonInverse(z, lam); math.Abs(got-x) > 1e-9*math.Max(1, math.Abs(x)) {
				t.Errorf("λ=%v: ψ⁻¹(ψ(%v)) = %v", lam, x, got)
			}
		}
	}
	if yeoJohnson(-2.5, 1) != -2.5 || yeoJohnson(4, 1) != 4 {
		t.Errorf("ψ_1 is not the identity")
	}
}

func skewness(x []float64) float64 {
	var m, m2, m3 float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		m2 += (v - m) * (v - m)
		m3 += (v - m) * (v - m) * (v - m)
	}
	n := float64(len(x))
	return (m3 / n) / math.Pow(m2/n, 1.5)
}

// Values of a minimized objective with a heavy upper tail (here exp of a
// Gaussian, as user/heavytail2) become, maximized, a heavy lower tail: the
// dataset warps them with λ > 1 into nearly symmetric values, and native
// maps every warped value back to the observation it came from. Gaussian
// values are barely changed (λ ≈ 1 up to sampling error) and a heavy upper
// tail (a peak) is left alone.
func TestDatasetWarpsLowerTail(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	gauss := make([]Trial, 40)
	heavy := make([]Trial, 40)
	for i := range heavy {
		z := rng.NormFloat64()
		heavy[i] = Trial{ID: i, Status: Complete, U: []float64{0.5}, Value: math.Exp(2 * z)}
		gauss[i] = Trial{ID: i, Status: Complete, U: []float64{0.5}, Value: z}
	}
	ds := newDataset(heavy, 1, true)
	ds.warp()
	if !ds.warped || !(ds.lambda > 1.5) {
		t.Fatalf("heavy lower tail: warped %v with λ = %v, want λ > 1.5", ds.warped, ds.lambda)
	}
	raw := newDataset(heavy, 1, true)
	if s, s0 := skewness(ds.y), skewness(raw.y); math.Abs(s) > math.Abs(s0)/4 {
		t.Errorf("warped values keep skewness %.2f (%.2f unwarped), want a quarter of it at most", s, s0)
	}
	for i, tr := range heavy {
		if got := ds.native(ds.y[i]); math.Abs(got-tr.Value) > 1e-6*tr.Value {
			t.Fatalf("native(y_%d) = %v, want the observation %v", i, got, tr.Value)
		}
	}
	// Beyond the warp's image the exact inverse is infinite: what a record
	// or chart gets is the bound (bounds), finite.
	for _, y := range []float64{-1e3, 1e3} {
		if v := ds.native(y); math.IsInf(v, 0) || math.IsNaN(v) || v < ds.lo || v > ds.hi {
			t.Fatalf("native(%v) = %v, want finite within [%v, %v]", y, v, ds.lo, ds.hi)
		}
	}
	ds = newDataset(gauss, 1, false)
	ds.warp()
	if ds.warped && math.Abs(ds.lambda-1) > 0.5 {
		t.Errorf("gaussian: warped with λ = %v, want λ ≈ 1", ds.lambda)
	}
	ds = newDataset(heavy, 1, false)
	ds.warp()
	if ds.warped {
		t.Errorf("upper tail: warped with λ = %v, want it left alone", ds.lambda)
	}
}

// warpingProposer is randomProposer asking for warped outputs.
type warpingProposer struct{ randomProposer }

func (warpingProposer) WarpOutputs() bool { return true }

// The host fits the GP to warped values exactly when the proposer asks for
// it (acq.OutputWarper; the default acquisition "tes" does): with a few
// observations far below the rest, the values the GP sees are at most half
// as skewed as the standardized observations; otherwise they are those.
func TestStudyWarpsForOutputWarper(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		p    acq.Proposer
		warp bool
	}{{randomProposer{}, false}, {warpingProposer{}, true}} {
		s, err := NewStudy(ctx, unitInfo(2), Options{Proposer: c.p, Init: 12})
		if err != nil {
			t.Fatal(err)
		}
		var fitted []float64
		s.testHooks().gpFit = func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error) {
			fitted = append([]float64(nil), y...)
			return gp.Fit(X, y, fs)
		}
		if _, err := s.Ask(ctx, 0); err != nil {
			t.Fatal(err)
		}
		for _, tr := range s.Trials() {
			if err := s.Tell(ctx, tr.ID, -math.Exp(float64(tr.ID)), nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Ask(ctx, 0); err != nil {
			t.Fatal(err)
		}
		raw := newDataset(s.Trials(), 2, false).y
		warped := !slices.Equal(fitted, raw)
		if warped != c.warp || (warped && skewness(fitted) < skewness(raw)/2) {
			t.Errorf("%T: GP fitted to values of skewness %.2f (observations %.2f), want warped %v",
				c.p, skewness(fitted), skewness(raw), c.warp)
		}
	}
}

// λ is fitted to every observation: a study opened with 2 points (too few
// to fit λ on) whose later values have a long lower tail — a few far below
// the basin BO found — is warped, with λ > 1.
func TestWarpUsesEveryObservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var trials []Trial
	for i := range 30 {
		tr := Trial{ID: i, Status: Complete, U: []float64{0.5}, Value: 3 + 0.1*rng.NormFloat64()}
		if i < 2 || i%7 == 0 {
			tr.Value = -math.Exp(3 + rng.NormFloat64())
		}
		if i >= 2 {
			tr.Iteration = i - 1
		}
		trials = append(trials, tr)
	}
	ds := newDataset(trials, 1, false)
	ds.warp()
	if !ds.warped || !(ds.lambda > 1) {
		t.Errorf("warped %v with λ = %v, want a warp with λ > 1", ds.warped, ds.lambda)
	}
	ds = newDataset(trials[:2], 1, false)
	ds.warp()
	if ds.warped {
		t.Errorf("two observations warped with λ = %v", ds.lambda)
	}
}

// LoadPosterior rebuilds a warped model as the host fitted it: the same
// posterior in GP units, Native maps each observation's GP-unit value back
// to its native value, and every value lies within the native image of the
// posterior mean ± 3 SD at its point.
func TestLoadPosteriorWarped(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	info := unitInfo(2)
	info.Minimize = true
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) {
		return math.Expm1(12 * (x[0]*x[0] + x[1]*x[1])), nil
	}}
	fitted, trials := runRecordingFits(t, obj, Options{DB: wrap(db), Name: "w", Proposer: warpingProposer{}, Init: 12, Iters: 2, Seed: 3})
	p, err := LoadPosterior(ctx, wrap(db), "w", 1000)
	if err != nil {
		t.Fatal(err)
	}
	host := fitted[p.GP.N()]
	if !p.ds.warped || host == nil {
		t.Fatalf("rebuilt posterior: warped %v, n %d, never fitted by the host", p.ds.warped, p.GP.N())
	}
	for _, u := range [][]float64{{0.1, 0.2}, {0.7, 0.4}, {0.95, 0.9}} {
		m1, v1 := p.GP.MeanVar(u)
		m2, v2 := host.MeanVar(u)
		if math.Abs(m1-m2) > 1e-9 || math.Abs(v1-v2) > 1e-9 {
			t.Fatalf("at %v: rebuilt %v ± %v, host %v ± %v", u, m1, v1, m2, v2)
		}
	}
	for k, id := range p.TrialIDs {
		y, want := p.GP.Y()[k], trials[id].Value
		if got := p.Native(y); math.Abs(got-want) > 1e-6*math.Max(1, math.Abs(want)) {
			t.Errorf("trial %d: Native(its GP-unit observation %v) = %v, want its value %v", id, y, got, want)
		}
		// The posterior mean at an observation lies within 3 posterior SDs
		// of it in GP units; Native is monotone, so the value lies between
		// the native images of mean ± 3 SD.
		m, v := p.GP.MeanVar(p.GP.X().RawRowView(k))
		a, b := p.Native(m-3*math.Sqrt(v)), p.Native(m+3*math.Sqrt(v))
		if lo, hi := math.Min(a, b), math.Max(a, b); want < lo || want > hi {
			t.Errorf("trial %d: value %v outside the native image [%v, %v] of mean %v ± 3·%v", id, want, lo, hi, m, math.Sqrt(v))
		}
	}
	if sd := p.NativeSD(0.1); !(sd > 0) {
		t.Errorf("NativeSD(0.1) = %v", sd)
	}
}
