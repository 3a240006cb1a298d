package host

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/store"
)

// testdata/settings-v1-current.json was written by NewStudy before the
// stored settings had a version (version 1): options that differ from the
// defaults almost everywhere. It decodes to the options it was stored
// with, the current encoding is the same bytes with "version":2 added, and
// a study stored with it runs bit for bit as one made now.
func TestStoredSettingsCurrent(t *testing.T) {
	raw, err := os.ReadFile("testdata/settings-v1-current.json")
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultOptions().Stored()
	want.Acquisition, want.Batch, want.Iters, want.Init, want.Parallel = "ei", 2, 3, 4, 3
	want.NoiseVar, want.FixNoise, want.Params = 1e-4, true, map[string]string{"k": "v"}
	want.Kernel, want.GPPrior, want.Recommend = KernelSE, PriorScaled, RecommendEvaluated
	want.EvalTimeout, want.Retries, want.RetryBackoff = 5*time.Second, 2, 100*time.Millisecond
	want.Meta = map[string]string{"m": "1"}
	want.AcqOptions = acq.Options{MCSamples: 32, Optimize: acq.OptimizeSettings{RawSamples: 50, Restarts: 2}}
	st, err := decodeSettings(raw)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Options.Stored(); !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, want)
	}
	if st.Info.Name != "probe" || len(st.Info.Params) != 2 || !st.Info.Minimize {
		t.Fatalf("info %+v", st.Info)
	}
	enc, err := encodeSettings(st.Options, st.Info)
	if err != nil {
		t.Fatal(err)
	}
	if wantEnc := append([]byte(`{"version":2,`), bytes.TrimSpace(raw)[1:]...); !bytes.Equal(enc, wantEnc) {
		t.Fatalf("encoded\n%s\nwant\n%s", enc, wantEnc)
	}
	again, err := decodeSettings(enc)
	if err != nil || !reflect.DeepEqual(again.Options.Stored(), want) {
		t.Fatalf("version 2 decodes to\n%+v (%v)\nwant\n%+v", again.Options.Stored(), err, want)
	}

	// A study stored with it (seed 9, no trials yet) runs the trials of the
	// same study made now.
	ctx := context.Background()
	obj := acceptsParams{funcObjective{info: st.Info, f: func(_ context.Context, x []float64) (float64, error) {
		return (x[0]-0.5)*(x[0]-0.5) + 0.1*x[1], nil
	}}}
	db, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	space, _ := json.Marshal(st.Info.Params)
	if err := db.CreateStudy(ctx, &store.Study{Name: "old", Objective: "probe", Acquisition: "ei", Seed: 9, Space: space, Settings: raw}); err != nil {
		t.Fatal(err)
	}
	old, err := OpenStudy(ctx, wrap(db), "old", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if got := old.Settings().Stored(); !reflect.DeepEqual(got, want) {
		t.Fatalf("OpenStudy settings\n%+v\nwant\n%+v", got, want)
	}
	a, err := old.Run(ctx, obj)
	if err != nil {
		t.Fatal(err)
	}
	o := want
	o.DB, o.Name, o.Seed = wrap(db), "new", 9
	b, err := Optimize(ctx, obj, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Trials) != 4+3*2 {
		t.Fatalf("%d trials", len(a.Trials))
	}
	sameTrials(t, a.Trials, b.Trials)
	row, err := db.Study(ctx, "new")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(row.Settings, []byte(`{"version":2,`)) {
		t.Fatalf("a new study stores %s", row.Settings)
	}
}

// The legacy rules hold for version 1 only, and a newer version is refused
// with a message that says what to do.
func TestStoredSettingsVersions(t *testing.T) {
	v1, err := decodeSettings([]byte(`{"noise_var":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if !v1.ZeroNoise || v1.Kernel != KernelSE || v1.GPPrior != PriorWeak {
		t.Fatalf("version 1 without kernel, gp_prior, zero_noise: %+v", v1.Options)
	}
	v2, err := decodeSettings([]byte(`{"version":2,"noise_var":0}`))
	if err != nil {
		t.Fatal(err)
	}
	if d := DefaultOptions(); v2.Kernel != d.Kernel || v2.GPPrior != d.GPPrior || v2.ZeroNoise || v2.NoiseVar != d.NoiseVar {
		t.Fatalf("version 2 read with version 1's rules: %+v", v2.Options)
	}
	for _, bad := range []string{`{"version":3}`, `{"version":-1}`} {
		_, err := decodeSettings([]byte(bad))
		if err == nil || (strings.Contains(bad, "3") && !strings.Contains(err.Error(), "upgrade tesbo")) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// acceptsParams is a funcObjective that takes run parameters.
type acceptsParams struct{ funcObjective }

func (acceptsParams) Configure(context.Context, map[string]string) error { return nil }

// editStoredSettings replaces the first from in study name's stored
// settings with to, as an earlier version might have stored them.
func editStoredSettings(t *testing.T, db *Storage, name, from, to string) {
	t.Helper()
	ctx := context.Background()
	row, err := db.store().Study(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(row.Settings), from, to, 1)
	if edited == string(row.Settings) {
		t.Fatalf("study %s: no %s in the stored settings: %s", name, from, row.Settings)
	}
	if err := db.store().UpdateSettings(ctx, row.ID, []byte(edited)); err != nil {
		t.Fatal(err)
	}
}
