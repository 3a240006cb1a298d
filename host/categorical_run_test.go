package host

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"

	"github.com/tesbo/tesbo/acq"
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

var mixedInfo = sdk.Info{Name: "test/mixed", Params: []sdk.Param{
	{Name: "x", Kind: sdk.Float, Low: -1, High: 1},
	{Name: "k", Kind: sdk.Int, Low: 0, High: 4},
	{Name: "lr", Kind: sdk.LogFloat, Low: 1e-4, High: 1},
	{Name: "c", Kind: sdk.Categorical, Choices: []string{"a", "b", "c", "d"}},
}}

func (o *mixedObjective) Info(context.Context) (sdk.Info, error) { return mixedInfo, nil }

func (o *mixedObjective) Evaluate(_ context.Context, x []float64) (float64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	if !sdk.Space(mixedInfo.Params).Contains(x) || x[1] != math.Round(x[1]) {
		if o.bad == "" {
			o.bad = fmt.Sprint(x)
		}
		return 0, fmt.Errorf("bad point %v", x)
	}
	v := sdk.Values(mixedInfo, x)
	f := -v.Float("x")*v.Float("x") - 0.1*math.Abs(float64(v.Int("k"))-2) - 0.1*math.Abs(math.Log10(v.Float("lr"))+2)
	if v.Choice("c") == "b" {
		f += 2
	}
	return f, nil
}

// Every registered acquisition either optimizes a mixed space, delivering
// exact in-range categorical indices (and integer Ints) to the objective,
// or refuses it with an error that names categorical parameters.
func TestMixedSpaceEveryAcquisition(t *testing.T) {
	for _, name := range acq.Names() {
		t.Run(name, func(t *testing.T) {
			obj := &mixedObjective{}
			res, err := Optimize(context.Background(), obj, Options{Acquisition: name, Batch: 2, Iters: 3, Init: 5, Seed: 9})
			if err != nil {
				t.Logf("refused: %v", err)
				return
			}
			if obj.bad != "" {
				t.Fatalf("objective received %s", obj.bad)
			}
			if res.Evaluations != obj.n || obj.n != 11 {
				t.Fatalf("%d evaluations, objective saw %d", res.Evaluations, obj.n)
			}
		})
	}
}
