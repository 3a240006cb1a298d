package host

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Default names of studies started in the same second differ, and keep
// the objective-timestamp prefix.
func TestDefaultStudyNameUnique(t *testing.T) {
	now := time.Date(2026, 11, 24, 18, 15, 16, 0, time.UTC)
	a, b := DefaultStudyName("synthetic/branin", now), DefaultStudyName("synthetic/branin", now)
	if a == b {
		t.Fatalf("two studies started in the same second are both named %q", a)
	}
	if !regexp.MustCompile(`^synthetic/branin-20261124-181516-[0-9a-f]{6}$`).MatchString(a) {
		t.Fatalf("name %q", a)
	}
}

// Normalized is idempotent over many option values: zero, default,
// negative and positive values of every field with a default or a
// stand-in, drawn from a fixed seed, and a table of edge cases.
func TestNormalizedIdempotent(t *testing.T) {
	cases := []Options{
		{}, DefaultOptions(),
		{NoiseVar: -1}, {NoiseVar: -1e-9}, {ZeroNoise: true}, {ZeroNoise: true, NoiseVar: 0.3},
		{NoInit: true}, {NoInit: true, Init: 4}, {Grace: -1}, {Batch: 4}, {Batch: 4, Parallel: 2},
		{NoiseVar: math.NaN()}, {NoiseVar: math.Inf(1)},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(vs ...float64) float64 { return vs[rng.IntN(len(vs))] }
	for range 2000 {
		cases = append(cases, Options{
			Acquisition: []string{"", "ei", "tes"}[rng.IntN(3)],
			Batch:       int(pick(0, 1, 3, -2)), Iters: int(pick(0, 5, -1)), Init: int(pick(0, 3, -1)),
			NoInit: rng.IntN(2) == 0, Parallel: int(pick(0, 2, -3)),
			NoiseVar:  pick(0, 1e-4, 0.5, -1, -1e-300, math.Copysign(0, -1)),
			ZeroNoise: rng.IntN(3) == 0, Kernel: []string{"", KernelMatern52}[rng.IntN(2)],
			GPPrior: []string{"", PriorWeak}[rng.IntN(2)], Recommend: []string{"", RecommendRefine}[rng.IntN(2)],
			RetryBackoff: time.Duration(pick(0, 1e6, -1)), Grace: time.Duration(pick(0, 1e9, -1)),
		})
	}
	for i, o := range cases {
		n := o.Normalized()
		if nn := n.Normalized(); !sameOptions(n, nn) {
			t.Fatalf("case %d %+v: Normalized %+v, again %+v", i, o, n, nn)
		}
		if s := o.Stored(); !sameOptions(s, s.Stored()) {
			t.Fatalf("case %d: Stored is not idempotent: %+v, %+v", i, s, s.Stored())
		}
		if n.ZeroNoise && n.NoiseVar != 0 || !n.ZeroNoise && n.NoiseVar == 0 {
			t.Fatalf("case %d %+v: normalized noise (%v, zero %v)", i, o, n.NoiseVar, n.ZeroNoise)
		}
	}
}

// sameOptions compares options by their fields that are values (NaN equal
// to itself).
func sameOptions(a, b Options) bool {
	if math.IsNaN(a.NoiseVar) && math.IsNaN(b.NoiseVar) {
		a.NoiseVar, b.NoiseVar = 0, 0
	}
	return reflect.DeepEqual(a, b)
}

// The defaults are the documented constants, and a noise-free study passed
// through Normalized twice stays noise-free (the --noise-var 0 bug).
func TestDefaultOptions(t *testing.T) {
	d := DefaultOptions()
	if d.Acquisition != DefaultAcquisition || d.Batch != DefaultBatch || d.Iters != DefaultIters || d.Init != DefaultInit ||
		d.Parallel != DefaultBatch || d.NoiseVar != DefaultNoiseVar || d.ZeroNoise || d.Kernel != DefaultKernel ||
		d.GPPrior != PriorScaled || d.Recommend != RecommendAuto || d.RetryBackoff != DefaultBackoff || d.Grace != DefaultGrace {
		t.Fatalf("DefaultOptions() = %+v", d)
	}
	for _, o := range []Options{{ZeroNoise: true}, {NoiseVar: -1}} {
		if n := o.Normalized().Normalized(); n.NoiseVar != 0 || !n.ZeroNoise {
			t.Fatalf("%+v normalized twice: noise %v, zero %v", o, n.NoiseVar, n.ZeroNoise)
		}
	}
	b := &branin{}
	if err := ConfigureObjective(context.Background(), b, "b", Options{ZeroNoise: true}.Normalized()); err != nil {
		t.Fatal(err)
	}
	if b.noiseVar != 0 {
		t.Fatalf("noise-free options configured noise_var %v", b.noiseVar)
	}
}

// Settings stored by an older version (acq.Options under Go field names,
// noise_var 0 for a noise-free study, no zero_noise, and — older still — no
// gp_prior or no kernel) decode to the meaning they were stored with, also through
// OpenStudy, and the current encoding decodes back to the same options.
func TestStoredSettingsLegacy(t *testing.T) {
	raw, err := os.ReadFile("testdata/settings-v1-noisefree.json")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultOptions().Stored()
	want.Batch, want.Parallel, want.Init, want.NoInit, want.NoiseVar, want.ZeroNoise = 2, 2, 0, true, 0, true
	want.Params = map[string]string{"a": "b"}
	want.Kernel = KernelSE // stored when SE was the default
	want.AcqOptions = acq.Options{Trusted: 6, UCBBeta: 2, MCSamples: 64, Lie: acq.LieMax,
		Optimize: acq.OptimizeSettings{RawSamples: 100, Restarts: 3, Workers: 2, GradTol: 1e-4}}
	check := func(what string, raw []byte, want Options) {
		t.Helper()
		st, err := decodeSettings(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Options.Stored(); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: decoded\n%+v\nwant\n%+v", what, got, want)
		}
		if st.Info.Name != "probe" || len(st.Info.Params) != 2 {
			t.Fatalf("%s: info %+v", what, st.Info)
		}
	}
	check("stored v1", raw, want)
	older := regexp.MustCompile(`,"gp_prior":"scaled"`).ReplaceAll(raw, nil)
	if bytes.Equal(older, raw) {
		t.Fatal("fixture has no gp_prior to remove")
	}
	weak := want
	weak.GPPrior = PriorWeak
	check("stored before gp_prior", older, weak)
	noKernel := regexp.MustCompile(`"kernel":"se",`).ReplaceAll(raw, nil)
	if bytes.Equal(noKernel, raw) {
		t.Fatal("fixture has no kernel to remove")
	}
	check("stored without a kernel", noKernel, want)
	if DefaultOptions().Kernel != KernelMatern52 {
		t.Errorf("a new study's kernel is %q, want %q", DefaultOptions().Kernel, KernelMatern52)
	}
	st, _ := decodeSettings(raw)
	now, err := encodeSettings(st.Options, st.Info)
	if err != nil {
		t.Fatal(err)
	}
	check("re-encoded", now, want)

	db, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	space, _ := json.Marshal(st.Info.Params)
	if err := db.CreateStudy(ctx, &store.Study{Name: "legacy", Objective: "probe", Acquisition: "tes", Seed: 7, Space: space, Settings: raw}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenStudy(ctx, wrap(db), "legacy", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Settings().Stored(); !reflect.DeepEqual(got, want) {
		t.Fatalf("OpenStudy settings\n%+v\nwant\n%+v", got, want)
	}
}

// FuzzDecodeSettings: stored settings JSON never makes decoding panic, and
// decoded settings are normalized and encode to JSON that decodes to the
// same encoding (a study reopened twice runs with the same settings).
func FuzzDecodeSettings(f *testing.F) {
	if raw, err := os.ReadFile("testdata/settings-v1-noisefree.json"); err == nil {
		f.Add(raw)
	}
	for _, s := range []string{`{}`, `null`, `{"noise_var":-1}`, `{"zero_noise":true,"noise_var":0.5}`,
		`{"acq_options":{"UCBBeta":2,"ucb_beta":3,"Optimize":{"RawSamples":7}}}`, `{"batch":"x"}`, `[`,
		`{"info":{"Name":"f","Params":[{"Name":"x","Kind":0,"Low":0,"High":1}]},"gp_prior":"weak"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeSettings(b)
		if err != nil {
			return
		}
		if n := st.Options.Normalized(); !sameOptions(n, st.Options) {
			t.Fatalf("decoded settings are not normalized:\n%+v\n%+v", st.Options, n)
		}
		enc, err := encodeSettings(st.Options, st.Info)
		if err != nil {
			return // a value JSON cannot hold; nothing was stored
		}
		st2, err := decodeSettings(enc)
		if err != nil {
			t.Fatalf("re-encoded settings %s do not decode: %v", enc, err)
		}
		enc2, _ := encodeSettings(st2.Options, st2.Info)
		if !bytes.Equal(enc, enc2) {
			t.Fatalf("settings changed on a second decode:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzSpace: for a space sdk accepts, NewSpace succeeds and every unit-cube
// point maps to a native point inside the space that maps back (ToUnit)
// without error.
func FuzzSpace(f *testing.F) {
	f.Add(0, 0.0, 1.0, 1, -3.0, 4.0, 0.5, 0.5)
	f.Add(2, 1e-6, 1.0, 1, 0.5, 1.5, 1.0, 0.0)
	f.Add(1, -1e300, 1e300, 0, -1e-300, 1e-300, 0.999, 1.0)
	f.Fuzz(func(t *testing.T, k1 int, lo1, hi1 float64, k2 int, lo2, hi2, u1, u2 float64) {
		params := []sdk.Param{{Name: "a", Kind: sdk.ParamKind(k1), Low: lo1, High: hi1}, {Name: "b", Kind: sdk.ParamKind(k2), Low: lo2, High: hi2}}
		sp, err := NewSpace(params)
		if err != nil {
			return
		}
		x := sp.ToNative([]float64{u1, u2})
		if !sdk.Space(params).Contains(x) {
			t.Fatalf("ToNative(%v, %v) = %v, outside %+v", u1, u2, x, params)
		}
		if _, err := sp.ToUnit(x); err != nil {
			t.Fatalf("ToUnit(%v): %v", x, err)
		}
	})
}
