package host

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tesbo/tesbo/sdk"
)

func catParams() []sdk.Param {
	return []sdk.Param{
		{Name: "x", Kind: sdk.Float, Low: -1, High: 1},
		{Name: "opt", Kind: sdk.Categorical, Choices: []string{"sgd", "adam", "rmsprop"}},
	}
}

// A categorical coordinate maps to exact indices, every choice owns a third
// of the axis, and ToUnit(ToNative(u)) = Snap(u) exactly.
func TestSpaceCategorical(t *testing.T) {
	sp, err := NewSpace(catParams())
	if err != nil {
		t.Fatal(err)
	}
	if got := sp.Categories(); !reflect.DeepEqual(got, []int{0, 3}) {
		t.Fatalf("Categories = %v", got)
	}
	if n, finite := sp.Cardinality(); finite || n < 1 {
		t.Fatalf("Cardinality = %v, %v", n, finite)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	counts := make([]int, 3)
	for range 3000 {
		u := []float64{rng.Float64(), rng.Float64()}
		x := sp.ToNative(u)
		k := x[1]
		if k != float64(int(k)) || k < 0 || k > 2 {
			t.Fatalf("ToNative(%v) = %v: not an exact index", u, x)
		}
		counts[int(k)]++
		back, err := sp.ToUnit(x)
		if err != nil {
			t.Fatal(err)
		}
		if snap := sp.Snap(u); back[1] != snap[1] {
			t.Fatalf("ToUnit(ToNative(%v)) = %v, Snap = %v", u, back, snap)
		}
	}
	for k, c := range counts {
		if c < 900 || c > 1100 {
			t.Errorf("choice %d drawn %d times of 3000", k, c)
		}
	}
	for _, x := range [][]float64{{0, 1.5}, {0, 3}, {0, -1}} {
		if _, err := sp.ToUnit(x); err == nil {
			t.Errorf("ToUnit(%v) accepted", x)
		}
	}
	if sp2, _ := NewSpace(catParams()[:1]); sp2.Categories() != nil {
		t.Error("Categories of a continuous space is not nil")
	}
}

func TestChoiceNames(t *testing.T) {
	rec := Record{Batch: [][]float64{{0.5, 2}}, BestX: []float64{0, 1}}
	nameChoices(&rec, catParams())
	if !reflect.DeepEqual(rec.Choices, []map[string]string{{"opt": "rmsprop"}}) || rec.BestChoices["opt"] != "adam" || rec.BestObservedChoices != nil {
		t.Fatalf("choices %v, best %v, observed %v", rec.Choices, rec.BestChoices, rec.BestObservedChoices)
	}
	plain := Record{Batch: [][]float64{{0.5}}}
	nameChoices(&plain, catParams()[:1])
	if plain.Choices != nil || plain.BestChoices != nil {
		t.Fatal("choices on a space without categoricals")
	}
}

// Property: on random spaces mixing every kind, any unit-cube point
// (including out-of-range and NaN coordinates) maps to a native point the
// space contains, with exact in-range indices for every Categorical and
// integers for every Int, and Snap is idempotent and consistent with
// ToUnit∘ToNative.
func TestSpaceCategoricalProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 17))
	for trial := range 300 {
		d := 1 + rng.IntN(6)
		params := make([]sdk.Param, d)
		for i := range params {
			name := string(rune('a' + i))
			switch rng.IntN(4) {
			case 0:
				params[i] = sdk.Param{Name: name, Kind: sdk.Float, Low: -rng.Float64(), High: rng.Float64() + 0.01}
			case 1:
				params[i] = sdk.Param{Name: name, Kind: sdk.Int, Low: float64(rng.IntN(5)) - 2.5, High: float64(rng.IntN(5)) + 3}
			case 2:
				params[i] = sdk.Param{Name: name, Kind: sdk.LogFloat, Low: 1e-6, High: 1 + rng.Float64()}
			default:
				ch := make([]string, 1+rng.IntN(7))
				for k := range ch {
					ch[k] = string(rune('A' + k))
				}
				params[i] = sdk.Param{Name: name, Kind: sdk.Categorical, Choices: ch}
			}
		}
		sp, err := NewSpace(params)
		if err != nil {
			t.Fatalf("space %d: %v", trial, err)
		}
		for range 50 {
			u := make([]float64, d)
			for i := range u {
				switch rng.IntN(10) {
				case 0:
					u[i] = math.NaN()
				case 1:
					u[i] = 3 * (rng.Float64() - 0.5)
				default:
					u[i] = rng.Float64()
				}
			}
			x := sp.ToNative(u)
			if !sdk.Space(params).Contains(x) {
				t.Fatalf("ToNative(%v) = %v outside %+v", u, x, params)
			}
			for i, p := range params {
				if (p.Kind == sdk.Int || p.Kind == sdk.Categorical) && x[i] != math.Trunc(x[i]) {
					t.Fatalf("%v: coordinate %d = %v not exact", p.Kind, i, x[i])
				}
			}
			snap := sp.Snap(u)
			back, err := sp.ToUnit(x)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range params {
				if p.Kind == sdk.Int || p.Kind == sdk.Categorical {
					if back[i] != snap[i] || sp.Snap(snap)[i] != snap[i] {
						t.Fatalf("Snap/ToUnit disagree at %d: %v vs %v", i, back, snap)
					}
				}
			}
		}
	}
}
