package serve

import (
	"context"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// oneMatters depends on its first parameter only.
type oneMatters struct{}

func (oneMatters) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "test/one", Params: []sdk.Param{
		{Name: "a", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "b", Kind: sdk.Float, Low: 0, High: 1},
	}}, nil
}

func (oneMatters) Evaluate(_ context.Context, x []float64) (float64, error) {
	return -(x[0] - 0.3) * (x[0] - 0.3), nil
}

// A parameter the objective ignores gets almost no importance.
func TestImportanceIgnoredParameter(t *testing.T) {
	db, _ := newDB(t)
	if _, err := host.Optimize(context.Background(), oneMatters{}, host.Options{DB: hostStorage(db), Name: "one",
		Acquisition: "ei", Init: 8, Batch: 2, Iters: 3, Seed: 2}); err != nil {
		t.Fatal(err)
	}
	var m modelJSON
	decodeJSON(t, get(t, newServer(t, db, Settings{}), "/api/model?name=one"), 200, &m)
	if len(m.Importance) != 2 || m.Importance[0] < 0.9 {
		t.Fatalf("importance of (a, b) = %v, want a's above 0.9", m.Importance)
	}
	t.Logf("importance of (a, b) = %.4f", m.Importance)
}

// hugeOne is oneMatters times 1e300: values near the largest float64.
type hugeOne struct{ oneMatters }

func (h hugeOne) Evaluate(ctx context.Context, x []float64) (float64, error) {
	v, err := h.oneMatters.Evaluate(ctx, x)
	return 1e300 * v, err
}

// The model view of outputs of order 1e300 answers, with the importance
// of outputs of order 1: the variances of the main effects, in native
// units, had overflowed to a NaN share and the answer to a 500.
func TestImportanceHugeValues(t *testing.T) {
	db, _ := newDB(t)
	o := host.Options{DB: hostStorage(db), Acquisition: "ei", Init: 8, Batch: 2, Iters: 3, Seed: 2}
	for name, obj := range map[string]sdk.Objective{"one": oneMatters{}, "huge": hugeOne{}} {
		o.Name = name
		if _, err := host.Optimize(context.Background(), obj, o); err != nil {
			t.Fatal(err)
		}
	}
	srv := newServer(t, db, Settings{})
	var one, huge modelJSON
	decodeJSON(t, get(t, srv, "/api/model?name=one"), 200, &one)
	decodeJSON(t, get(t, srv, "/api/model?name=huge"), 200, &huge)
	if len(huge.Importance) != 2 || huge.Importance[0] < 0.9 {
		t.Fatalf("importance at 1e300 = %v, at 1 %v", huge.Importance, one.Importance)
	}
}
