package serve

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/storebridge"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// branin is the negated Branin function, maximized (f* = −0.397887).
type branin struct{}

var braninOpt = -0.397887357729739

func (branin) Info(context.Context) (sdk.Info, error) {
	opt := braninOpt
	return sdk.Info{Name: "test/branin", Optimum: &opt, Params: []sdk.Param{
		{Name: "x1", Kind: sdk.Float, Low: -5, High: 10},
		{Name: "x2", Kind: sdk.Float, Low: 0, High: 15},
	}}, nil
}

func (branin) Evaluate(_ context.Context, x []float64) (float64, error) {
	a, b, c, r, s, t := 1.0, 5.1/(4*math.Pi*math.Pi), 5/math.Pi, 6.0, 10.0, 1/(8*math.Pi)
	v := x[1] - b*x[0]*x[0] + c*x[0] - r
	return -(a*v*v + s*(1-t)*math.Cos(x[0]) + s), nil
}

// newDB returns a fresh study database and its path.
func newDB(t testing.TB) (*store.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "studies.db")
	db, err := store.Open(path, store.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// runStudy runs a whole Branin study: 4 initial points, then iters
// iterations of batch 2.
func runStudy(t testing.TB, db *store.DB, name, acq string, iters int) *host.Result {
	t.Helper()
	res, err := host.Optimize(context.Background(), branin{}, host.Options{DB: hostStorage(db), Name: name,
		Acquisition: acq, Init: 4, Batch: 2, Iters: iters, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// openStudy starts a Branin study for Ask/Tell.
func openStudy(t testing.TB, db *store.DB, name, acq string, iters int) *host.Study {
	t.Helper()
	info, _ := branin{}.Info(context.Background())
	s, err := host.NewStudy(context.Background(), info, host.Options{DB: hostStorage(db), Name: name,
		Acquisition: acq, Init: 4, Batch: 2, Iters: iters, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// step asks for a batch and tells its Branin values.
func step(t testing.TB, s *host.Study) []host.Trial {
	t.Helper()
	ts, err := s.Ask(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range ts {
		v, _ := branin{}.Evaluate(context.Background(), tr.X)
		if err := s.Tell(context.Background(), tr.ID, v, nil); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

// get sends a GET from a loopback client with the extra headers
// ("Name: value").
func get(t testing.TB, h http.Handler, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Host = "127.0.0.1:8080"
	for _, kv := range headers {
		k, v, _ := strings.Cut(kv, ": ")
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// decodeJSON decodes a response body, failing t unless the status is
// want.
func decodeJSON(t testing.TB, rec *httptest.ResponseRecorder, want int, v any) {
	t.Helper()
	if rec.Code != want {
		t.Fatalf("status %d, want %d: %s", rec.Code, want, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body.String(), err)
	}
}

// newServer returns a Server of db closed at the end of the test.
func newServer(t testing.TB, db *store.DB, s Settings) *Server {
	t.Helper()
	srv := New(hostStorage(db), s)
	t.Cleanup(srv.Close)
	return srv
}

// hostStorage is host's handle on a database a test opened with store.
func hostStorage(db store.Storage) *host.Storage { return storebridge.Wrap(db).(*host.Storage) }
