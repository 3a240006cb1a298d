package serve

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// tradeoff minimizes two outputs that pull x0 apart, subject to
// x0 + x1 ≤ 1.2.
type tradeoff struct{}

func (tradeoff) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: "tradeoff", Params: []sdk.Param{{Name: "x0", High: 1}, {Name: "x1", High: 1}},
		Outputs: []sdk.Output{{Name: "cost", Goal: sdk.Minimize}, {Name: "loss", Goal: sdk.Minimize},
			{Name: "budget", Goal: sdk.Constraint, Feasible: sdk.AtMost, Bound: sdk.Bound(1.2)}}}, nil
}

func (t tradeoff) Evaluate(ctx context.Context, x []float64) (float64, error) {
	out, err := t.EvaluateOutputs(ctx, x)
	return out[0], err
}

func (tradeoff) EvaluateOutputs(_ context.Context, x []float64) ([]float64, error) {
	return []float64{(x[0]-0.2)*(x[0]-0.2) + (x[1]-0.5)*(x[1]-0.5), (x[0]-0.8)*(x[0]-0.8) + (x[1]-0.5)*(x[1]-0.5), x[0] + x[1]}, nil
}

func runTradeoff(t testing.TB, db *store.DB) *host.Result {
	t.Helper()
	res, err := host.Optimize(context.Background(), tradeoff{}, host.Options{DB: hostStorage(db), Name: "mo",
		Acquisition: "parego", Init: 6, Batch: 2, Iters: 3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// The study API of a several-output study carries the declared outputs,
// the latest record's Pareto set, hypervolume and feasible fraction, and
// every complete trial's outputs.
func TestAPIOutputs(t *testing.T) {
	db, _ := newDB(t)
	res := runTradeoff(t, db)
	srv := newServer(t, db, Settings{})
	var st struct {
		Summary struct {
			Outputs []struct {
				Name, Goal, Feasible string
				Bound                *float64
			} `json:"outputs"`
			Pareto           []int    `json:"pareto"`
			Hypervolume      *float64 `json:"hypervolume"`
			FeasibleFraction *float64 `json:"feasible_fraction"`
			BestObserved     *float64 `json:"best_observed"`
		} `json:"summary"`
	}
	decodeJSON(t, get(t, srv, "/api/study?name=mo"), http.StatusOK, &st)
	s := st.Summary
	if len(s.Outputs) != 3 || s.Outputs[1].Goal != "minimize" || s.Outputs[2].Feasible != "at_most" || *s.Outputs[2].Bound != 1.2 ||
		len(s.Pareto) == 0 || s.Hypervolume == nil || s.FeasibleFraction == nil || s.BestObserved != nil {
		t.Fatalf("summary %+v", s)
	}
	if m := res.Multi; fmt.Sprint(m.Pareto.Trials) != fmt.Sprint(s.Pareto) || *m.Hypervolume != *s.Hypervolume {
		t.Fatalf("summary's Pareto set %v / %v, the run's %v / %v", s.Pareto, *s.Hypervolume, m.Pareto.Trials, *m.Hypervolume)
	}
	var tr struct {
		Trials []struct {
			ID      int       `json:"id"`
			Outputs []float64 `json:"outputs"`
		} `json:"trials"`
	}
	decodeJSON(t, get(t, srv, "/api/trials?name=mo"), http.StatusOK, &tr)
	for i, x := range tr.Trials {
		if fmt.Sprint(x.Outputs) != fmt.Sprint(res.Trials[i].Outputs) {
			t.Fatalf("trial %d outputs %v, want %v", x.ID, x.Outputs, res.Trials[i].Outputs)
		}
	}
}

// The study page draws the Pareto front of a study with two objectives:
// every complete trial is a point, and the chart says how many trials the
// Pareto set holds. It needs chromium (see browser).
func TestBrowserParetoFront(t *testing.T) {
	db, _ := newDB(t)
	res := runTradeoff(t, db)
	srv := newServer(t, db, Settings{Poll: 200 * time.Millisecond})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	defer srv.Close()
	ctx := browser(t, 1200, 900)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/study/mo?static=1")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, fmt.Sprintf(`!document.getElementById('pareto-box').hidden && document.getElementById('pareto').dataset.points === '%d'`, res.Evaluations),
		`[document.getElementById('pareto-box').hidden, document.getElementById('pareto').dataset.points]`, 15*time.Second)
	note := fmt.Sprintf("Pareto set (%d trials)", len(res.Multi.Pareto.Trials))
	waitJS(t, ctx, fmt.Sprintf(`document.getElementById('pareto-note').textContent.includes(%q)`, note),
		`document.getElementById('pareto-note').textContent`, 5*time.Second)
}
