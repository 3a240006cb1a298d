package serve

import (
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// mixed is a maximized objective over a log-scaled learning rate, a float
// and a categorical optimizer, scaled so that its regrets fall far below
// 1e-3 (for the log axes' labels): f* = 0 at lr = 1e-4, x = 0.3, adam.
type mixed struct{}

var mixedChoices = []string{"adam", "sgd", "rmsprop"}

func (mixed) Info(context.Context) (sdk.Info, error) {
	opt := 0.0
	return sdk.Info{Name: "test/mixed", Optimum: &opt, Params: []sdk.Param{
		{Name: "lr", Kind: sdk.LogFloat, Low: 1e-7, High: 1e-1},
		{Name: "x", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "opt", Kind: sdk.Categorical, Choices: mixedChoices},
	}}, nil
}

func (mixed) Evaluate(_ context.Context, x []float64) (float64, error) {
	l := math.Log10(x[0]) + 4
	return -1e-4 * (l*l + 10*(x[1]-0.3)*(x[1]-0.3) + 2*x[2]), nil
}

// runMixed runs a mixed study of init + iters × batch 2 evaluations.
func runMixed(t testing.TB, db *store.DB, name string, init, iters int) *host.Result {
	t.Helper()
	res, err := host.Optimize(context.Background(), mixed{}, host.Options{DB: hostStorage(db), Name: name,
		Acquisition: "ei", Init: init, Batch: 2, Iters: iters, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The trials' downloads name a categorical parameter's choices, as
// 'tesbo-host trials' does: the CSV cell is the name, the JSON trial
// carries choices {param: name} beside its indices.
func TestTrialsChoiceNames(t *testing.T) {
	db, _ := newDB(t)
	runMixed(t, db, "m", 5, 1)
	srv := newServer(t, db, Settings{})
	row, _ := db.Study(context.Background(), "m")
	stored, _ := db.Trials(context.Background(), row.ID)

	var out trialsJSON
	decodeJSON(t, get(t, srv, "/api/trials?name=m&download=1"), 200, &out)
	for i, tr := range out.Trials {
		want := mixedChoices[int(stored[i].X[2])]
		if tr.Choices["opt"] != want || len(tr.Choices) != 1 || tr.X[2] != stored[i].X[2] {
			t.Fatalf("JSON trial %d: choices %v x %v, want opt=%s", i, tr.Choices, tr.X, want)
		}
	}
	var st studyJSON
	decodeJSON(t, get(t, srv, "/api/study?name=m"), 200, &st)
	last := st.Iterations[len(st.Iterations)-1]
	if !last.Done || last.BestChoices["opt"] != mixedChoices[int(last.BestX[2])] {
		t.Fatalf("last iteration: best_x %v, best_choices %v", last.BestX, last.BestChoices)
	}
	rec := get(t, srv, "/api/trials?name=m&format=csv")
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rows[0][11:], ","); got != "lr,x,opt" {
		t.Fatalf("csv head %q", got)
	}
	for i, st := range stored {
		r := rows[i+1]
		if r[13] != mixedChoices[int(st.X[2])] || r[11] != strconv.FormatFloat(st.X[0], 'g', -1, 64) {
			t.Fatalf("csv row %q, stored x %v", r, st.X)
		}
	}
}

// The model view of a categorical parameter: one point per choice (native
// x 0, 1, 2), not a line sampled between them; the importance of each
// parameter (shares summing to 1); and the 2-D slice over a pair of
// parameters, which through x̄'s choice agrees with the 1-D slice.
func TestModelCategoricalImportance2D(t *testing.T) {
	db, _ := newDB(t)
	runMixed(t, db, "m", 8, 3)
	srv := newServer(t, db, Settings{})
	var m modelJSON
	decodeJSON(t, get(t, srv, "/api/model?name=m"), 200, &m)
	if len(m.Slices) != 3 || m.Note != "" {
		t.Fatalf("model %+v", m)
	}
	if sl := m.Slices[2]; sl.Param != "opt" || len(sl.X) != 3 || sl.X[0] != 0 || sl.X[1] != 1 || sl.X[2] != 2 || len(sl.Mean) != 3 {
		t.Fatalf("categorical slice %+v", sl)
	}
	if len(m.Importance) != 3 {
		t.Fatalf("importance %v", m.Importance)
	}
	sum := 0.0
	for _, v := range m.Importance {
		if v < 0 || v > 1 {
			t.Fatalf("importance %v", m.Importance)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("importance %v sums to %v", m.Importance, sum)
	}
	t.Logf("importance lr, x, opt: %.3f", m.Importance)

	var g gridJSON
	decodeJSON(t, get(t, srv, "/api/model2d?name=m&x=0&y=2&res=61"), 200, &g)
	if g.X.Name != "lr" || g.Y.Name != "opt" || len(g.X.X) != 61 || len(g.Y.X) != 3 || len(g.Mean) != 3 || len(g.Mean[0]) != 61 ||
		len(g.SD) != 3 || g.Iteration != m.Iteration {
		t.Fatalf("grid %+v", g)
	}
	row := int(m.XBar.X[2])
	for k := range 61 {
		if math.Abs(g.Mean[row][k]-m.Slices[0].Mean[k]) > 1e-9*math.Max(1, math.Abs(g.Mean[row][k])) || g.X.X[k] != m.Slices[0].X[k] {
			t.Fatalf("grid row of x̄'s choice differs from the 1-D slice at %d: %v vs %v", k, g.Mean[row][k], m.Slices[0].Mean[k])
		}
	}
	decodeJSON(t, get(t, srv, "/api/model2d?name=m&x=0&y=1"), 200, &g)
	if len(g.X.X) != gridDefault || len(g.Y.X) != gridDefault {
		t.Fatalf("default grid %d×%d", len(g.X.X), len(g.Y.X))
	}
	for _, q := range []string{"x=0&y=0", "x=0", "x=0&y=3", "x=-1&y=1", "x=0&y=1&res=1000", "x=0&y=1&res=2", "x=a&y=1"} {
		var e struct{ Error string }
		decodeJSON(t, get(t, srv, "/api/model2d?name=m&"+q), 400, &e)
		if e.Error == "" {
			t.Errorf("%s: no error", q)
		}
	}
}
