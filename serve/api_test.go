package serve

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// The list page and /api/studies show every study with its counts, best
// value, recommendation and regret as stored.
func TestStudiesList(t *testing.T) {
	db, _ := newDB(t)
	res := runStudy(t, db, "synthetic/branin-a", "ei", 3)
	s := openStudy(t, db, "live", "random", 5)
	step(t, s)
	srv := newServer(t, db, Settings{})

	var out struct{ Studies []summary }
	decodeJSON(t, get(t, srv, "/api/studies"), 200, &out)
	if len(out.Studies) != 2 {
		t.Fatalf("%d studies", len(out.Studies))
	}
	a, live := out.Studies[0], out.Studies[1]
	if a.Name != "synthetic/branin-a" || a.Objective != "test/branin" || a.Acquisition != "ei" || a.State != stateFinished ||
		a.Complete != 10 || a.Budget != 10 || a.Trials != 10 {
		t.Fatalf("finished study: %+v", a)
	}
	if *a.BestObserved != res.BestObserved.Value || *a.Recommendation != *res.BestValue || *a.Regret != *res.Regret ||
		a.Iteration != 3 || *a.Optimum != braninOpt {
		t.Fatalf("finished study values: %+v, result %+v", a, res)
	}
	if live.State != stateRunning || !strings.Contains(live.Holder, "pid") || live.Complete != 4 || live.Budget != 14 ||
		live.Recommendation != nil {
		t.Fatalf("live study: %+v", live)
	}

	rec := get(t, srv, "/")
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("list page: %d %s", rec.Code, body)
	}
	for _, want := range []string{`href="/study/synthetic%2Fbranin-a"`, ">synthetic/branin-a<", ">live<", "10 / 10", "running", "finished",
		strconv.FormatFloat(*res.Regret, 'g', 6, 64)} {
		if !strings.Contains(body, want) {
			t.Errorf("list page lacks %q", want)
		}
	}
}

// The study page names the study (also one with a slash in its name)
// and loads its script; an unknown study is a 404 page saying so.
func TestStudyPage(t *testing.T) {
	db, _ := newDB(t)
	runStudy(t, db, "synthetic/branin-a", "random", 1)
	srv := newServer(t, db, Settings{})
	for _, path := range []string{"/study/synthetic/branin-a", "/study/synthetic%2Fbranin-a"} {
		rec := get(t, srv, path)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `data-name="synthetic/branin-a"`) ||
			!strings.Contains(rec.Body.String(), `/assets/study.js`) {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body.String())
		}
	}
	rec := get(t, srv, "/study/nope")
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "study &#34;nope&#34; not found") ||
		!strings.Contains(rec.Body.String(), "synthetic/branin-a") {
		t.Fatalf("unknown study: %d %s", rec.Code, rec.Body.String())
	}
	// Markup in a name is escaped, not interpreted.
	rec = get(t, srv, "/study/"+url.PathEscape("<script>x</script>"))
	if rec.Code != 404 || strings.Contains(rec.Body.String(), "<script>x") {
		t.Fatalf("name with markup: %d %s", rec.Code, rec.Body.String())
	}
}

// /api/study: summary, parameters and every iteration with its record.
func TestAPIStudy(t *testing.T) {
	db, _ := newDB(t)
	res := runStudy(t, db, "a", "ei", 3)
	srv := newServer(t, db, Settings{})
	var st studyJSON
	decodeJSON(t, get(t, srv, "/api/study?name=a"), 200, &st)
	if st.Summary.Name != "a" || st.Batch != 2 || st.Seed != "3" || len(st.Params) != 2 ||
		!reflect.DeepEqual(st.Params[1], paramJSON{Name: "x2", Kind: "float", Low: 0, High: 15}) {
		t.Fatalf("study %+v", st)
	}
	if len(st.Iterations) != 4 || st.Iterations[0].HasModel || st.Iterations[0].Done {
		t.Fatalf("iterations %+v", st.Iterations)
	}
	last := st.Iterations[3]
	if !last.HasModel || !last.Done || last.Iter != 3 || last.Evals != 10 || *last.BestValue != *res.BestValue ||
		*last.Regret != *res.Regret || last.FitS <= 0 {
		t.Fatalf("last iteration %+v", last)
	}
}

// /api/trials gives every trial with its parameters, as JSON or CSV,
// bitwise as stored.
func TestAPITrials(t *testing.T) {
	db, _ := newDB(t)
	runStudy(t, db, "a", "random", 2)
	s := openStudy(t, db, "b", "random", 2)
	ts, err := s.Ask(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	s.Tell(context.Background(), ts[0].ID, 0, errString("objective exploded\nat line 2"))
	srv := newServer(t, db, Settings{})
	row, _ := db.Study(context.Background(), "a")
	stored, _ := db.Trials(context.Background(), row.ID)

	var out trialsJSON
	decodeJSON(t, get(t, srv, "/api/trials?name=a"), 200, &out)
	if out.Study != "a" || strings.Join(out.Params, ",") != "x1,x2" || len(out.Trials) != len(stored) {
		t.Fatalf("trials %+v", out)
	}
	for i, tr := range out.Trials {
		st := stored[i]
		if tr.ID != st.ID || tr.X[0] != st.X[0] || tr.X[1] != st.X[1] || *tr.Value != st.Value || tr.Status != "complete" ||
			tr.Finished == nil || !tr.Finished.Equal(st.FinishedAt) {
			t.Fatalf("trial %d: %+v, stored %+v", i, tr, st)
		}
	}

	rec := get(t, srv, "/api/trials?name=a&format=csv&download=1")
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "text/csv; charset=utf-8" ||
		rec.Header().Get("Content-Disposition") != `attachment; filename="a-trials.csv"` {
		t.Fatalf("csv: %d %v", rec.Code, rec.Header())
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != "id,iteration,index,status,value,error,attempts,created,started,finished,eval_s,x1,x2" ||
		len(rows) != len(stored)+1 {
		t.Fatalf("csv head %v, %d rows", rows[0], len(rows))
	}
	for i, st := range stored {
		r := rows[i+1]
		v, _ := strconv.ParseFloat(r[4], 64)
		x2, _ := strconv.ParseFloat(r[12], 64)
		if r[0] != strconv.Itoa(st.ID) || v != st.Value || x2 != st.X[1] || r[3] != "complete" {
			t.Fatalf("csv row %v, stored %+v", r, st)
		}
	}
	// A failed trial: no value, its error; a pending one: no times.
	rec = get(t, srv, "/api/trials?name=b&format=csv")
	rows, _ = csv.NewReader(rec.Body).ReadAll()
	if rows[1][3] != "failed" || rows[1][4] != "" || rows[1][5] != "objective exploded\nat line 2" || rows[2][3] != "pending" || rows[2][9] != "" {
		t.Fatalf("failed and pending rows %q", rows[1:])
	}
	var b trialsJSON
	decodeJSON(t, get(t, srv, "/api/trials?name=b&download=1"), 200, &b)
	if b.Trials[0].Value != nil || b.Trials[0].Error == "" || b.Trials[1].Status != "pending" || b.Trials[1].Finished != nil {
		t.Fatalf("failed and pending trials %+v", b.Trials)
	}
	var e struct{ Error string }
	decodeJSON(t, get(t, srv, "/api/trials?name=a&format=xml"), 400, &e)
	if !strings.Contains(e.Error, `format "xml": want json or csv`) {
		t.Fatalf("bad format: %q", e.Error)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// Bad names: none, unknown, too long; each a JSON error saying so.
func TestBadNames(t *testing.T) {
	db, _ := newDB(t)
	runStudy(t, db, "a", "random", 0)
	srv := newServer(t, db, Settings{})
	long := strings.Repeat("n", maxNameLen+1)
	for _, api := range []string{"study", "trials", "model", "events"} {
		for _, c := range []struct {
			query string
			code  int
			want  string
		}{
			{"", 400, "no study named: add ?name=STUDY"},
			{"?name=zz", 404, `study "zz" not found in`},
			{"?name=" + long, 404, "study name of 1025 bytes not found"},
		} {
			var e struct{ Error string }
			decodeJSON(t, get(t, srv, "/api/"+api+c.query), c.code, &e)
			if !strings.Contains(e.Error, c.want) {
				t.Errorf("/api/%s%.20s: %q lacks %q", api, c.query, e.Error, c.want)
			}
		}
	}
	if rec := get(t, srv, "/nowhere"); rec.Code != 404 || !strings.Contains(rec.Body.String(), "no page /nowhere") {
		t.Fatalf("unknown page: %d %s", rec.Code, rec.Body.String())
	}
}

// Only GET and HEAD: the server never writes.
func TestReadOnlyMethods(t *testing.T) {
	db, _ := newDB(t)
	srv := newServer(t, db, Settings{})
	for _, path := range []string{"/", "/api/studies", "/api/trials?name=a", "/study/a"} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
			req, _ := http.NewRequest(m, "http://127.0.0.1"+path, strings.NewReader("x"))
			rec := httptest.NewRecorder()
			srv.ServeHTTP(rec, req)
			if rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d", m, path, rec.Code)
			}
		}
	}
}

// The model view: the latest iteration's posterior along each parameter
// through x̄, as host.LoadPosterior gives it, and TES's trusted
// maximizers with p(x*) summing to 1.
func TestAPIModel(t *testing.T) {
	db, _ := newDB(t)
	runStudy(t, db, "tes", "tes", 2)
	runStudy(t, db, "ei", "ei", 2)
	s := openStudy(t, db, "design", "random", 2)
	step(t, s)
	srv := newServer(t, db, Settings{})

	var m modelJSON
	decodeJSON(t, get(t, srv, "/api/model?name=tes"), 200, &m)
	if m.Iteration != 2 || m.N != 6 || m.Fitted != 6 || len(m.Slices) != 2 || m.Note != "" || m.XBar.Trial == nil {
		t.Fatalf("model %+v", m)
	}
	p, err := host.LoadPosterior(context.Background(), hostStorage(db), "tes", 100)
	if err != nil {
		t.Fatal(err)
	}
	k := -1
	for i, id := range p.TrialIDs {
		if id == *m.XBar.Trial {
			k = i
		}
	}
	u := p.GP.X().RawRowView(k)
	for j, sl := range m.Slices {
		x, mean, sd := p.Slice(u, j, sliceGrid)
		if sl.X[7] != x[7] || sl.Mean[7] != mean[7] || sl.SD[7] != sd[7] || len(sl.X) != sliceGrid {
			t.Fatalf("slice %d differs from the posterior's", j)
		}
	}
	// x̄ has the largest posterior mean of the evaluated points.
	for i := range p.TrialIDs {
		if mi, _ := p.GP.MeanVar(p.GP.X().RawRowView(i)); p.Native(mi) > m.XBar.Mean+1e-9 {
			t.Fatalf("trial %d has a larger mean than x̄", p.TrialIDs[i])
		}
	}
	if len(m.Trusted) < 5 || m.Entropy == nil {
		t.Fatalf("trusted maximizers %+v", m.Trusted)
	}
	sum := 0.0
	for i, x := range m.Trusted {
		sum += x.P
		if i > 0 && x.P > m.Trusted[i-1].P || x.X[0] < -5 || x.X[0] > 10 {
			t.Fatalf("trusted %+v", m.Trusted)
		}
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("p(x*) sums to %v", sum)
	}
	// Cached: the same answer until the study changes.
	var again modelJSON
	decodeJSON(t, get(t, srv, "/api/model?name=tes"), 200, &again)
	if again.Trusted[0].P != m.Trusted[0].P {
		t.Fatal("a second request gave another p(x*)")
	}

	decodeJSON(t, get(t, srv, "/api/model?name=ei"), 200, &m)
	if m.Iteration != 2 || len(m.Slices) != 2 || len(m.Trusted) != 0 || m.Entropy != nil {
		t.Fatalf("ei model %+v", m)
	}
	decodeJSON(t, get(t, srv, "/api/model?name=design"), 200, &m)
	if m.Iteration != 0 || len(m.Slices) != 0 || !strings.Contains(m.Note, "no BO iteration has fitted a model yet (the initial design is done)") {
		t.Fatalf("design-only model %+v", m)
	}
	small := newServer(t, db, Settings{ModelMaxEvaluations: 5})
	decodeJSON(t, get(t, small, "/api/model?name=tes"), 200, &m)
	if len(m.Slices) != 0 || !strings.Contains(m.Note, "more than the 5 allowed") {
		t.Fatalf("model beyond the limit %+v", m)
	}
}

// A study of several outputs has no single model to show: the model view
// says so, rather than that the initial design is still running.
func TestModelSeveralOutputs(t *testing.T) {
	ctx := context.Background()
	db := host.MemoryStorage()
	info := sdk.Info{Name: "two", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}},
		Outputs: []sdk.Output{{Name: "a", Goal: sdk.Maximize}, {Name: "b", Goal: sdk.Minimize}}}
	obj := twoOutputs{info}
	if _, err := host.Optimize(ctx, obj, host.Options{DB: db, Name: "mo", Init: 3, Iters: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	v, _, _, err := New(db, Settings{}).computeModel(ctx, "mo")
	if err != nil || !strings.Contains(v.Note, "2 outputs, each with its own model") {
		t.Fatalf("model view note %q (%v), want it to say the study has several outputs", v.Note, err)
	}
}

type twoOutputs struct{ info sdk.Info }

func (o twoOutputs) Info(context.Context) (sdk.Info, error) { return o.info, nil }
func (o twoOutputs) Evaluate(context.Context, []float64) (float64, error) {
	return 0, nil
}
func (o twoOutputs) EvaluateOutputs(_ context.Context, x []float64) ([]float64, error) {
	return []float64{x[0], x[0] * x[0]}, nil
}

// A study's state counts pruned trials in its budget (a finished pruned
// or multi-fidelity study was "stopped") and trials told or imported from
// outside its proposals out of it (a warm-started study killed halfway
// was "finished").
func TestSummaryStateBudget(t *testing.T) {
	for _, c := range []struct {
		name                              string
		complete, failed, pruned, outside int
		want                              string
	}{
		{"pruned finished", 8, 0, 6, 0, stateFinished},
		{"warm start killed halfway", 16, 0, 0, 8, stateStopped},
		{"warm start finished", 22, 0, 0, 8, stateFinished},
	} {
		sm := &summary{Trials: c.complete + c.failed + c.pruned, Complete: c.complete, Failed: c.failed, Pruned: c.pruned,
			Budget: 14, Outside: c.outside}
		if err := sm.setState(nil); err != nil || sm.State != c.want {
			t.Errorf("%s: state %q (%v), want %q", c.name, sm.State, err, c.want)
		}
	}
}

// Trials in flight with no lease holder are "interrupted" unless live
// workers are registered: then the study runs, between two proposers
// (a database restart made the proposer give up its lease).
func TestSummaryStateWorkersBetweenProposers(t *testing.T) {
	for _, c := range []struct {
		workers int
		want    string
	}{{0, stateInterrupted}, {2, stateRunning}} {
		sm := &summary{Trials: 6, Complete: 4, Running: 2, Budget: 10, workers: c.workers}
		if err := sm.setState(nil); err != nil || sm.State != c.want {
			t.Errorf("%d workers: state %q (%v), want %q", c.workers, sm.State, err, c.want)
		}
	}
}

// The web view's CSV carries a several-output study's outputs and each
// trial's feasibility, as 'trials --format csv' does.
func TestCSVOutputs(t *testing.T) {
	ctx := context.Background()
	db, _ := newDB(t)
	bound := 0.5
	info := sdk.Info{Name: "two", Params: []sdk.Param{{Name: "x", Low: 0, High: 1}},
		Outputs: []sdk.Output{{Name: "a", Goal: sdk.Maximize}, {Name: "c", Goal: sdk.Constraint, Bound: &bound, Feasible: sdk.AtMost}}}
	if _, err := host.Optimize(ctx, twoOutputs{info}, host.Options{DB: hostStorage(db), Name: "mo", Acquisition: "cei", Init: 4, Iters: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	rec := get(t, newServer(t, db, Settings{}), "/api/trials?name=mo&format=csv")
	if rec.Code != 200 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body.String())
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	n := len(head)
	if head[n-3] != "a" || head[n-2] != "c" || head[n-1] != "feasible" {
		t.Fatalf("csv head %q, want the outputs a, c and feasible last", head)
	}
	for _, r := range rows[1:] {
		c, _ := strconv.ParseFloat(r[n-2], 64)
		if want := strconv.FormatBool(c <= bound); r[n-1] != want {
			t.Fatalf("row %q: feasible %q, want %s", r, r[n-1], want)
		}
	}
}

// The evaluations cell counts the study's own finished trials against its
// budget and names the stopped, failed and outside ones.
func TestSummaryEvalText(t *testing.T) {
	sm := &summary{Complete: 16, Pruned: 13, Failed: 2, Outside: 7, Budget: 29}
	if got := sm.EvalText(); got != "24 / 29 (13 stopped, 2 failed, 7 imported or attached)" {
		t.Fatalf("EvalText = %q", got)
	}
	if got := (&summary{Complete: 3, Budget: 5}).EvalText(); got != "3 / 5" {
		t.Fatalf("EvalText = %q", got)
	}
}

// The server keeps the models of the maxCachedModels studies requested
// last, not of every study it has shown (each holds an n×n factor).
func TestModelCacheBounded(t *testing.T) {
	db, _ := newDB(t)
	names := make([]string, maxCachedModels+2)
	for i := range names {
		names[i] = fmt.Sprint("s", i)
		runStudy(t, db, names[i], "random", 1)
	}
	srv := newServer(t, db, Settings{})
	for _, n := range append(names, names[0]) {
		var m modelJSON
		decodeJSON(t, get(t, srv, "/api/model?name="+n), 200, &m)
		if m.N == 0 {
			t.Fatalf("study %s: no model (%q)", n, m.Note)
		}
	}
	srv.modelMu.Lock()
	defer srv.modelMu.Unlock()
	if len(srv.models) != maxCachedModels {
		t.Fatalf("%d models cached, want %d", len(srv.models), maxCachedModels)
	}
	for _, n := range append(names[len(names)-maxCachedModels+1:], names[0]) { // the last requested
		if srv.models[n] == nil {
			t.Errorf("model of %s, among the last requested, was evicted", n)
		}
	}
}
