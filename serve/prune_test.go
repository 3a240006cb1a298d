package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// curveObj reports q·(1 − e^(−k/2)) for k = 1…6, q = 1 − 4(x − 0.3)², and
// stops when told to.
type curveObj struct{}

func (curveObj) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "curve", MaxStep: 6, Params: []sdk.Param{{Name: "x", Low: 0, High: 1}}}, nil
}

func (curveObj) Evaluate(ctx context.Context, x []float64) (float64, error) {
	q := 1 - 4*(x[0]-0.3)*(x[0]-0.3)
	var v float64
	for k := 1; k <= 6; k++ {
		v = q * (1 - math.Exp(-float64(k)/2))
		if prune, err := sdk.Report(ctx, k, v); err != nil || prune {
			return v, err
		}
	}
	return v, nil
}

// A study with pruned trials in the web view: /api/trials gives pruned
// trials their last value, step and learning curve, the summary counts
// them, and the study page draws the learning curves and the count.
func TestPrunedTrialsInTheWebView(t *testing.T) {
	db, _ := newDB(t)
	res, err := host.Optimize(context.Background(), curveObj{}, host.Options{DB: hostStorage(db), Name: "pr",
		Acquisition: "random", Init: 3, Iters: 12, Seed: 2, Pruning: host.Pruning{Rule: host.PrunerMedian}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pruned == 0 {
		t.Fatal("nothing pruned: the test needs some")
	}
	srv := newServer(t, db, Settings{Poll: 200 * time.Millisecond})
	defer srv.Close()
	var got struct {
		Trials []trialJSON `json:"trials"`
	}
	if err := json.Unmarshal(get(t, srv, "/api/trials?name=pr").Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	pruned := 0
	for _, tj := range got.Trials {
		if tj.Status != "pruned" {
			continue
		}
		pruned++
		if tj.Value == nil || tj.Step == nil || len(tj.Intermediates) != *tj.Step || tj.Intermediates[*tj.Step-1][1] != *tj.Value {
			t.Fatalf("pruned trial %d: value %v step %v curve %v", tj.ID, tj.Value, tj.Step, tj.Intermediates)
		}
	}
	if pruned != res.Pruned {
		t.Fatalf("%d pruned trials in the API, %d in the study", pruned, res.Pruned)
	}
	if body := get(t, srv, "/api/study?name=pr").Body.String(); !strings.Contains(body, fmt.Sprintf(`"pruned":%d`, pruned)) || !strings.Contains(body, `"steps":true`) {
		t.Fatalf("summary lacks the pruned count: %s", body)
	}
	// The study's GP is the default curve model, over (x, step): the view
	// draws it at full training.
	if o, _, err := host.StoredSettings(context.Background(), hostStorage(db), "pr"); err != nil || o.Pruning.Model != host.PruneModelCurve {
		t.Fatalf("stored pruning %+v (%v), want the curve model", o.Pruning, err)
	}
	var m modelJSON
	decodeJSON(t, get(t, srv, "/api/model?name=pr"), 200, &m)
	if m.Note != "" || len(m.Slices) != 1 || m.XBar.Trial == nil || len(m.Importance) != 1 {
		t.Fatalf("model view of a curve-model study: %+v", m)
	}
	if x := m.XBar.X[0]; math.Abs(x-0.3) > 0.15 || math.Abs(m.XBar.Mean-1) > 0.2 {
		t.Fatalf("x̄ %v with mean %v, want near 0.3 with its full-training value near 1", x, m.XBar.Mean)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	ctx := browser(t, 1200, 900)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/study/pr?static=1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, fmt.Sprintf(`document.getElementById('curves').dataset.curves === '%d' &&
		!document.getElementById('curves-box').hidden && document.getElementById('f-pruned').textContent === '%d'`, len(got.Trials), pruned),
		`[document.getElementById('curves').dataset.curves, document.getElementById('f-pruned').textContent]`, 15*time.Second)
	// The trial table has a step column, filled for the pruned trials.
	waitJS(t, ctx, `[...document.querySelectorAll('#trials thead th')].some((th) => th.textContent.trim() === 'step')`,
		`[...document.querySelectorAll('#trials thead th')].map((th) => th.textContent)`, 5*time.Second)
}
