package serve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"sort"
	"sync"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
	"github.com/tesbo/tesbo/tes"
)

// Limits of the model view.
const (
	sliceGrid      = 61 // points per slice
	maxSliceParams = 24 // slices drawn (the first parameters)
)

// pointJSON is a point of the model view with the posterior of f there.
type pointJSON struct {
	X     point   `json:"x"` // native units; an inactive parameter null
	Mean  float64 `json:"mean"`
	SD    float64 `json:"sd"`
	P     float64 `json:"p,omitempty"`     // p(x* | y_D), trusted maximizers only
	Trial *int    `json:"trial,omitempty"` // x̄'s trial ID
}

// sliceJSON is the posterior along one parameter through x̄.
type sliceJSON struct {
	Param string    `json:"param"`
	X     []float64 `json:"x"`
	Mean  []float64 `json:"mean"`
	SD    []float64 `json:"sd"`
}

// modelJSON is /api/model's answer.
type modelJSON struct {
	Iteration int         `json:"iteration"` // the BO iteration whose model this is
	N         int         `json:"n"`         // evaluations it conditions on (a model over the steps: every report it sees)
	Fitted    int         `json:"fitted"`    // evaluations its hyper-parameters were fitted to
	XBar      pointJSON   `json:"xbar"`
	Slices    []sliceJSON `json:"slices"`
	Trusted   []pointJSON `json:"trusted"` // by decreasing p; empty unless TES
	Entropy   *float64    `json:"entropy"` // H(x*) in nats, with Trusted
	// Importance is each parameter's share of the posterior mean's
	// variance explained by its main effect (see importance.go), in the
	// order of the parameters; empty without a model.
	Importance []float64 `json:"importance"`
	// Note explains a missing view ("" when there is one).
	Note string `json:"note,omitempty"`
}

// modelEntry caches a study's model view for one state of the study, and
// the posterior it was computed from (nil without one) with x̄'s
// unit-cube point, for the 2-D slices (/api/model2d).
type modelEntry struct {
	used uint64 // the Server's modelTick at its last request (guarded by modelMu)

	mu   sync.Mutex
	key  activityKey
	view *modelJSON
	post *host.StoredPosterior
	u    []float64
}

func (s *Server) apiModel(w http.ResponseWriter, r *http.Request) {
	answerStudy(s, w, r, s.modelView)
}

// modelView returns the study's model view, computed once per state of the
// study (its Activity).
func (s *Server) modelView(ctx context.Context, name string) (*modelJSON, error) {
	e, err := s.model(ctx, name)
	if err != nil {
		return nil, err
	}
	return e.view, nil
}

// model returns the study's cached model entry (a copy), computing it
// when the study changed since.
func (s *Server) model(ctx context.Context, name string) (*modelEntry, error) {
	if err := s.checkDB(); err != nil {
		return nil, err
	}
	row, err := s.db.Study(ctx, name)
	if err != nil {
		return nil, err
	}
	act, err := s.db.Activity(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	s.modelMu.Lock()
	s.modelTick++
	e := s.models[name]
	if e == nil {
		e = &modelEntry{used: s.modelTick}
		s.models[name] = e
		s.evictModels()
	}
	e.used = s.modelTick
	s.modelMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock()
	key := keyOf(act)
	if e.view == nil || e.key != key {
		v, post, u, err := s.computeModel(ctx, name)
		if err != nil {
			return nil, err
		}
		e.key, e.view, e.post, e.u = key, v, post, u
	}
	return &modelEntry{key: e.key, view: e.view, post: e.post, u: e.u}, nil
}

// maxCachedModels bounds the studies whose model the server keeps: an
// entry holds the posterior, with its n×n factor (8–32 MB at 1,000–2,000
// evaluations), and a server kept every study it had shown.
const maxCachedModels = 4

// evictModels forgets the least recently requested models beyond
// maxCachedModels (a request computing one keeps its own entry). Called
// with modelMu held.
func (s *Server) evictModels() {
	for len(s.models) > maxCachedModels {
		oldest := ""
		for name, e := range s.models {
			if oldest == "" || e.used < s.models[oldest].used {
				oldest = name
			}
		}
		delete(s.models, oldest)
	}
}

// computeModel builds the model view of study name (see the package doc),
// and returns the posterior and x̄'s unit-cube point with it.
func (s *Server) computeModel(ctx context.Context, name string) (*modelJSON, *host.StoredPosterior, []float64, error) {
	p, err := host.LoadPosterior(ctx, s.st, name, s.set.ModelMaxEvaluations)
	none := func(note string) *modelJSON {
		return &modelJSON{Note: note, Slices: []sliceJSON{}, Trusted: []pointJSON{}, Importance: []float64{}}
	}
	switch {
	case errors.Is(err, host.ErrNoModel):
		return none(noModelNote(err)), nil, nil, nil
	case errors.Is(err, store.ErrNotFound):
		return nil, nil, nil, err
	case err != nil:
		return none(err.Error()), nil, nil, nil
	}
	v := &modelJSON{Iteration: p.Iteration, N: p.GP.N(), Fitted: p.Fitted, Slices: []sliceJSON{}, Trusted: []pointJSON{}}
	best, u, meanBest := p.Best()
	_, varBest := p.MeanVar(u)
	v.XBar = pointJSON{X: p.Space.ToNative(u), Mean: p.Native(meanBest), SD: p.NativeSD(math.Sqrt(varBest)), Trial: &p.TrialIDs[best]}
	params := p.Space.Params()
	for j := range min(len(params), maxSliceParams) {
		var x, mean, sd []float64
		if params[j].Kind == sdk.Categorical {
			x, mean, sd = choiceSlice(p, u, j) // one point per choice, no line between
		} else {
			x, mean, sd = p.Slice(u, j, sliceGrid)
		}
		v.Slices = append(v.Slices, sliceJSON{Param: params[j].Name, X: x, Mean: mean, SD: sd})
	}
	v.Importance = importance(p)
	if err := v.addTrusted(p); err != nil {
		v.Note = err.Error()
	}
	return v, p, u, nil
}

// noModelNote says why a study has no model to show (err wraps
// host.ErrNoModel).
func noModelNote(err error) string {
	var nm *host.NoModelError
	if errors.As(err, &nm) {
		return "no model: " + nm.Reason
	}
	return "no model yet: the initial design is still running"
}

// addTrusted adds the stored trusted maximizers X* with p(x*|y_D)
// computed on the posterior of f at X* (a fixed seed, so the view does
// not flicker between requests).
func (v *modelJSON) addTrusted(p *host.StoredPosterior) error {
	xs, err := p.TrustedMaximizers()
	if err != nil || len(xs) == 0 {
		return nil // not TES, or nothing carried: no X* to show
	}
	d := p.Space.Dim()
	if len(xs[0]) != d {
		return fmt.Errorf("stored trusted maximizers have %d coordinates, the space %d", len(xs[0]), d)
	}
	X := mat.NewDense(len(xs), d, nil)
	for i, row := range xs {
		X.SetRow(i, row)
	}
	mean, cov := p.Joint(X)
	probs, err := tes.MaximizerProbabilities(rand.New(rand.NewPCG(uint64(p.Iteration), 0x7e5b0)), mean, cov, tes.MVNSettings{})
	if err != nil {
		return fmt.Errorf("p(x*) of the trusted maximizers: %w", err)
	}
	for i, row := range xs {
		v.Trusted = append(v.Trusted, pointJSON{X: p.Space.ToNative(row), Mean: p.Native(mean[i]),
			SD: p.NativeSD(math.Sqrt(cov.At(i, i))), P: probs.P[i]})
	}
	sort.SliceStable(v.Trusted, func(a, b int) bool { return v.Trusted[a].P > v.Trusted[b].P })
	h := probs.Entropy()
	v.Entropy = &h
	return nil
}
