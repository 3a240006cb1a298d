package host

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
)

// mixedObjective has Float, Int, LogFloat and Categorical parameters; the
// best choice is "b" (index 1), worth 2 over the others. It checks every
// point it receives and remembers the first bad one.
type mixedObjective struct {
	mu  sync.Mutex
	bad string
	n   int
}

var catSpaceInfo = sdk.Info{Name: "test/mixed", Params: []sdk.Param{
	{Name: "x", Kind: sdk.Float, Low: -1, High: 1},
	{Name: "k", Kind: sdk.Int, Low: 0, High: 4},
	{Name: "lr", Kind: sdk.LogFloat, Low: 1e-4, High: 1},
	{Name: "c", Kind: sdk.Categorical, Choices: []string{"a", "b", "c", "d"}},
}}

func (o *mixedObjective) Info(context.Context) (sdk.Info, error) { return catSpaceInfo, nil }

func (o *mixedObjective) Evaluate(_ context.Context, x []float64) (float64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	if !sdk.Space(catSpaceInfo.Params).Contains(x) || x[1] != math.Round(x[1]) {
		if o.bad == "" {
			o.bad = fmt.Sprint(x)
		}
		return 0, fmt.Errorf("bad point %v", x)
	}
	v := sdk.Values(catSpaceInfo, x)
	f := -v.Float("x")*v.Float("x") - 0.1*math.Abs(float64(v.Int("k"))-2) - 0.1*math.Abs(math.Log10(v.Float("lr"))+2)
	if v.Choice("c") == "b" {
		f += 2
	}
	return f, nil
}

// Every registered acquisition of one value either optimizes a mixed
// space, delivering exact in-range categorical indices (and integer Ints)
// to the objective, or refuses it with an error that names categorical
// parameters. (Those of several outputs only, acq.OutputsOnly, are
// refused on one value: TestOutputsOnlyAcquisitionRefused.)
func TestMixedSpaceEveryAcquisition(t *testing.T) {
	for _, name := range oneValueAcquisitions(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // independent in-memory studies: both cores
			obj := &mixedObjective{}
			iters := 4
			if name == "tes-sp" { // ~20 s per iteration here; one shows it works
				iters = 1
			}
			res, err := Optimize(context.Background(), obj, Options{Acquisition: name, Batch: 2, Iters: iters, Init: 5, Seed: 9})
			if err != nil {
				if !strings.Contains(err.Error(), "categorical") {
					t.Fatalf("refused without saying why: %v", err)
				}
				t.Logf("refused: %v", err)
				return
			}
			if obj.bad != "" {
				t.Fatalf("objective received %s", obj.bad)
			}
			if res.Evaluations != obj.n || obj.n != 5+2*iters {
				t.Fatalf("%d evaluations, objective saw %d", res.Evaluations, obj.n)
			}
		})
	}
}

// A study with categoricals resumes bitwise: interrupted during iteration 3
// and reopened, it ends with exactly the trials of one uninterrupted run,
// for the default acquisition (TES) and EI.
func TestMixedResumeExact(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{DefaultAcquisition, "ei"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // a database of its own per acquisition
			opts := func() Options {
				return Options{Acquisition: name, Batch: 2, Iters: 5, Init: 4, Seed: 21, Grace: -1}
			}
			want, err := Optimize(ctx, &mixedObjective{}, opts())
			if err != nil {
				t.Fatal(err)
			}
			path := interruptedStudy(t, &mixedObjective{}, opts(), 9)
			db := openDB(t, path, false)
			defer db.Close()
			s, err := OpenStudy(ctx, wrap(db), "st", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Info().Params[3].Choices; !reflect.DeepEqual(got, catSpaceInfo.Params[3].Choices) {
				t.Fatalf("stored choices %v", got)
			}
			if _, err := s.Run(ctx, &mixedObjective{}); err != nil {
				t.Fatal(err)
			}
			sameTrials(t, want.Trials, s.Trials())
		})
	}
}

// A stored study refuses an objective whose choices changed.
func TestMixedSpaceChangeRefused(t *testing.T) {
	a := catSpaceInfo.Params
	b := append([]sdk.Param(nil), a...)
	b[3] = sdk.Param{Name: "c", Kind: sdk.Categorical, Choices: []string{"a", "b", "x", "d"}}
	if err := sameSpace(a, b); err == nil || !strings.Contains(err.Error(), "parameter 3") {
		t.Fatalf("sameSpace: %v", err)
	}
	if err := sameSpace(a, catSpaceInfo.Params); err != nil {
		t.Fatal(err)
	}
}

// The stored posterior of a mixed study (the web view's model) is rebuilt
// with the mixed kernel it was fitted with.
func TestMixedStoredPosterior(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, filepath.Join(t.TempDir(), "s.db"), true)
	defer db.Close()
	if _, err := Optimize(ctx, &mixedObjective{}, Options{Acquisition: "ei", Iters: 2, Init: 4, Seed: 2, DB: wrap(db), Name: "m"}); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPosterior(ctx, wrap(db), "m", 100)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.GP.Kernel().(*gp.Mixed); !ok {
		t.Fatalf("stored posterior kernel %T, want *gp.Mixed", p.GP.Kernel())
	}
}

// oneValueAcquisitions returns the registered acquisitions that optimize
// an objective of one value: all but the acq.OutputsOnly ones.
func oneValueAcquisitions(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range acq.Names() {
		p, err := acq.Lookup(name, acq.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, only := p.(acq.OutputsOnly); !only {
			out = append(out, name)
		}
	}
	return out
}
