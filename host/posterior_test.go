package host

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
)

// runRecordingFits runs a study of obj with options o to completion and
// returns every GP the host fitted, by number of observations, and the
// study's trials.
func runRecordingFits(t *testing.T, obj sdk.Objective, o Options) (map[int]*gp.GP, []Trial) {
	t.Helper()
	ctx := context.Background()
	info, err := obj.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewStudy(ctx, info, o)
	if err != nil {
		t.Fatal(err)
	}
	fitted := recordFits(s)
	if _, err := s.Run(ctx, obj); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return fitted, s.Trials()
}

// recordFits records every GP study s fits from now on, by number of
// observations.
func recordFits(s *Study) map[int]*gp.GP {
	fitted := map[int]*gp.GP{}
	s.testHooks().gpFit = func(X *mat.Dense, y []float64, fs gp.FitSettings) (*gp.GP, error) {
		g, err := gp.Fit(X, y, fs)
		if err == nil {
			fitted[g.N()] = g
		}
		return g, err
	}
	return fitted
}

// LoadPosterior rebuilds, from the database alone, exactly the posterior
// the study used to propose its latest batch: same means and variances as
// the GP the host fitted, in native units through Native/NativeSD.
func TestLoadPosteriorMatchesHost(t *testing.T) {
	for _, minimize := range []bool{false, true} {
		ctx := context.Background()
		db := tempDB(t)
		info := unitInfo(2)
		info.Minimize = minimize
		obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) {
			return math.Sin(5*x[0]) + x[1]*x[1], nil
		}}
		fitted, trials := runRecordingFits(t, obj, Options{DB: wrap(db), Name: "p", Proposer: testProposer(), Init: 4, Batch: 2, Iters: 3, Seed: 7})
		p, err := LoadPosterior(ctx, wrap(db), "p", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if p.Iteration != 3 || p.GP.N() != 8 || p.Fitted != 8 || len(p.TrialIDs) != 8 {
			t.Fatalf("iteration %d, n %d, fitted %d, ids %v", p.Iteration, p.GP.N(), p.Fitted, p.TrialIDs)
		}
		host := fitted[8]
		if host == nil {
			t.Fatal("the host never fitted 8 observations")
		}
		rng := rand.New(rand.NewPCG(1, 2))
		for range 20 {
			u := []float64{rng.Float64(), rng.Float64()}
			m1, v1 := p.GP.MeanVar(u)
			m2, v2 := host.MeanVar(u)
			if math.Abs(m1-m2) > 1e-9 || math.Abs(v1-v2) > 1e-9 {
				t.Fatalf("at %v: rebuilt %v ± %v, host %v ± %v", u, m1, v1, m2, v2)
			}
		}
		// Native units: the mean at an evaluated point is (nearly) its value.
		for k, id := range p.TrialIDs {
			m, _ := p.GP.MeanVar(p.GP.X().RawRowView(k))
			if got, want := p.Native(m), trials[id].Value; math.Abs(got-want) > 0.05 {
				t.Errorf("minimize=%v trial %d: native mean %v, value %v", minimize, id, got, want)
			}
		}
		// Slice through the first point: its grid ends are the bounds, and
		// the sd is the scaled posterior sd.
		x, mean, sd := p.Slice(trials[0].U, 1, 11)
		if x[0] != 0 || x[10] != 1 || len(mean) != 11 {
			t.Fatalf("slice grid %v", x)
		}
		// The scale c is the values' sample standard deviation.
		var sum, ss float64
		for _, id := range p.TrialIDs {
			sum += trials[id].Value
		}
		for _, id := range p.TrialIDs {
			dv := trials[id].Value - sum/8
			ss += dv * dv
		}
		_, v := p.GP.MeanVar([]float64{trials[0].U[0], 0.5})
		if want := math.Sqrt(ss/7) * math.Sqrt(v); math.Abs(sd[5]-want) > 1e-12 || sd[5] <= 0 {
			t.Fatalf("slice sd %v, want %v", sd[5], want)
		}
		if _, err := LoadPosterior(ctx, wrap(db), "p", 7); err == nil {
			t.Fatal("no error beyond maxN")
		}
	}
}

// A study with only its initial design has no model; an unknown study is
// not found.
func TestLoadPosteriorNoModel(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	s, err := NewStudy(ctx, unitInfo(1), Options{DB: wrap(db), Name: "d", Proposer: testProposer(), Init: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ts, err := s.Ask(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		if tr.Iteration != 0 {
			t.Fatalf("trial %+v is not from the initial design", tr)
		}
		if err := s.Tell(ctx, tr.ID, tr.X[0], nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := LoadPosterior(ctx, wrap(db), "d", 100); !errors.Is(err, ErrNoModel) {
		t.Fatalf("design only: %v, want ErrNoModel", err)
	}
	if _, err := LoadPosterior(ctx, wrap(db), "nope", 100); err == nil {
		t.Fatal("unknown study: no error")
	}
}

// A study whose GP has a fidelity input — a pruned study's curve model, a
// multi-fidelity study — is rebuilt over (u, t) and read at full training:
// Predict, MeanVar and Best agree with the GP the host fitted at t = 1.
func TestLoadPosteriorFidelity(t *testing.T) {
	curve := curveOptions(randomProposer{})
	for name, o := range map[string]Options{"curve": curve, "multi-fidelity": mfOptions(&fixedFidelity{t: 0.4})} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := tempDB(t)
			o.DB, o.Name = wrap(db), "f"
			fitted, _ := runRecordingFits(t, curveObjective{steps: 9}, o)
			p, err := LoadPosterior(ctx, wrap(db), "f", 1000)
			if err != nil {
				t.Fatal(err)
			}
			host := fitted[p.GP.N()]
			if host == nil || host.Dim() != 3 || p.Dim() != 2 {
				t.Fatalf("rebuilt %d rows of %d inputs (Dim %d); host fits %v", p.GP.N(), p.GP.Dim(), p.Dim(), len(fitted))
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for range 20 {
				u := []float64{rng.Float64(), rng.Float64()}
				m1, v1 := p.MeanVar(u)
				m2, v2 := host.MeanVar([]float64{u[0], u[1], 1})
				if math.Abs(m1-m2) > 1e-9 || math.Abs(v1-v2) > 1e-9 {
					t.Fatalf("at %v: rebuilt %v ± %v, host at t = 1 %v ± %v", u, m1, v1, m2, v2)
				}
			}
			row, u, m := p.Best()
			if len(u) != 2 || !slices.Equal(u, p.GP.X().RawRowView(row)[:2]) {
				t.Fatalf("Best: row %d, point %v", row, u)
			}
			if mu, _ := p.MeanVar(u); mu != m {
				t.Fatalf("Best's mean %v, MeanVar's %v", m, mu)
			}
			for i := range p.GP.N() {
				if mi, _ := p.MeanVar(p.GP.X().RawRowView(i)[:2]); mi > m {
					t.Fatalf("row %d's mean at full training %v above Best's %v", i, mi, m)
				}
			}
		})
	}
}

// The model of a warped study stays finite in the objective's units: on
// Branin minimized (the README's first study, default settings), the
// warp's inverse is infinite beyond its image, where slices' means and
// mean ± sd lie; Native and NativeSD keep them within the fitted values'
// range widened by twice its span, exactly where the map is finite.
func TestStoredPosteriorNativeFinite(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	info := sdk.Info{Name: "branin", Minimize: true, Params: []sdk.Param{
		{Name: "x1", Kind: sdk.Float, Low: -5, High: 10}, {Name: "x2", Kind: sdk.Float, Low: 0, High: 15}}}
	obj := funcObjective{info: info, f: func(_ context.Context, x []float64) (float64, error) { return -braninF(x), nil }}
	if _, err := Optimize(ctx, obj, Options{DB: wrap(db), Name: "b", Iters: 30, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPosterior(ctx, wrap(db), "b", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !p.ds.warped {
		t.Fatal("the model is not warped: the case needs a warp")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, y := range p.GP.Y() {
		v := p.Native(y)
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		if exact := p.ds.native(y); v != exact {
			t.Fatalf("fitted value %v maps to %v, want the exact map's %v", y, v, exact)
		}
	}
	u := make([]float64, 2)
	for j := range 2 {
		for _, c := range []float64{0, 0.5, 1} {
			u[0], u[1] = c, 1-c
			_, mean, sd := p.Slice(u, j, 101)
			for i := range mean {
				if math.IsInf(mean[i], 0) || math.IsNaN(mean[i]) || math.IsInf(sd[i], 0) || math.IsNaN(sd[i]) ||
					mean[i] < lo-2*(hi-lo) || mean[i] > hi+2*(hi-lo) {
					t.Fatalf("slice %d at %v, point %d: mean %v, sd %v; want finite, the mean within [%v, %v] widened by twice its span", j, u, i, mean[i], sd[i], lo, hi)
				}
			}
		}
	}
}

// A stored model of values ±the largest float64 maps every mean and
// standard deviation to finite native values, warped (the default
// acquisition) or not: c·f + m and the warped sd's difference overflow
// without the bounds.
func TestStoredPosteriorHugeValuesFinite(t *testing.T) {
	ctx := context.Background()
	for _, acqName := range []string{"tes", "ei"} {
		db := tempDB(t)
		obj := funcObjective{unitInfo(2), func(_ context.Context, x []float64) (float64, error) {
			return 1.7e308 * math.Cos(9*x[0]+4*x[1]), nil
		}}
		if _, err := Optimize(ctx, obj, Options{DB: wrap(db), Name: "h", Iters: 8, Seed: 1, Acquisition: acqName}); err != nil {
			t.Fatal(err)
		}
		p, err := LoadPosterior(ctx, wrap(db), "h", 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, y := range []float64{-40, -3, 0, 3, 40} {
			if v, sd := p.Native(y), p.NativeSD(math.Abs(y)+1); math.IsInf(v, 0) || math.IsNaN(v) || math.IsInf(sd, 0) || math.IsNaN(sd) {
				t.Fatalf("%s (warped %v): Native(%v) = %v, NativeSD = %v", acqName, p.ds.warped, y, v, sd)
			}
		}
	}
}

// A finished study whose evaluations all failed has no model, and says
// so rather than that its initial design is still running.
func TestNoModelAllFailed(t *testing.T) {
	ctx := context.Background()
	db := tempDB(t)
	obj := funcObjective{unitInfo(2), func(context.Context, []float64) (float64, error) { return math.NaN(), nil }}
	o := baseOptions(2)
	o.DB, o.Name, o.Iters = wrap(db), "f", 2
	Optimize(ctx, obj, o) // fails: no evaluation completed
	_, err := LoadPosterior(ctx, wrap(db), "f", 1000)
	if !errors.Is(err, ErrNoModel) || !strings.Contains(err.Error(), "no evaluation completed: all 7 trials failed") {
		t.Fatalf("LoadPosterior: %v", err)
	}
}

func TestNoModelReasonInFlight(t *testing.T) {
	ts := []Trial{{Status: Failed}, {Status: Failed}, {Status: Running}}
	if r := noModelReason(ts); !strings.Contains(r, "the 2 finished so far failed, 1 in flight") {
		t.Fatalf("reason %q", r)
	}
	if r := noModelReason([]Trial{{Status: Complete}, {Status: Pending}}); r != "the initial design is still running" {
		t.Fatalf("reason %q", r)
	}
}
