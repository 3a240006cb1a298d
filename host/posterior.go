package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// ErrNoModel: a stored study has no fitted model yet (only its initial
// design ran, or every iteration fell back to a design point).
var ErrNoModel = errors.New("no fitted model stored yet")

// NoModelError is LoadPosterior's error when a study has no model it can
// rebuild, with the reason in words; it matches ErrNoModel.
type NoModelError struct {
	Study  string
	Reason string // e.g. "the initial design is still running"
}

func (e *NoModelError) Error() string {
	return fmt.Sprintf("study %q: %s: %v", e.Study, e.Reason, ErrNoModel)
}

// Is makes errors.Is(err, ErrNoModel) hold.
func (e *NoModelError) Is(target error) bool { return target == ErrNoModel }

// StoredPosterior is the GP posterior of a stored study as its latest
// fitted BO iteration t saw it: the model's stored hyper-parameters (no
// refit) conditioned on the trials of iterations before t that have
// completed, with the outputs standardized as the host standardizes them
// (see the README's conventions):
//
//	f_native(x) = s·(c·f(x) + m),  sd_native(x) = c·σ(x),
//
// s = −1 for a minimizing objective. It is read-only: building it writes
// nothing and changes nothing the study does next.
type StoredPosterior struct {
	Iteration int    // t, the iteration whose model this is
	Space     *Space // the study's search space
	// GP is the posterior on the unit cube, in standardized maximizing
	// units; its rows are the completed trials of iterations < t. In a
	// study whose GP has a fidelity input (a multi-fidelity study, a
	// pruned study's curve model) its rows are the trials' reports at
	// (u, t), and Predict, MeanVar, Joint and Best read it at t = 1.
	GP *gp.GP
	// TrialIDs are the trials of GP's rows, in order.
	TrialIDs []int
	// Fitted is the number of evaluations the hyper-parameters were fitted
	// to (GP.N() when every trial of iterations < t had finished then).
	Fitted int
	// AcqState is what the acquisition carried out of iteration t (for TES
	// its trusted maximizers, see TrustedMaximizers; nil when it carries
	// nothing).
	AcqState    json.RawMessage
	acquisition string // the study's acquisition, which decodes AcqState
	ds          *dataset
	// fidelity: GP's inputs are (u, t) — a multi-fidelity study's, or a
	// pruned study's curve model — and Predict, MeanVar, Joint and Best
	// read it at full training, t = 1.
	fidelity bool
}

// Dim is the number of the study's parameters (unit-cube coordinates):
// the inputs of Predict, MeanVar and Joint.
func (p *StoredPosterior) Dim() int { return p.Space.Dim() }

// atFull returns X (rows of Dim coordinates) as GP inputs: on a
// conditional space each row canonical (its inactive coordinates at their
// defaults, as the GP saw every trial: Space.ToUnit), with a fidelity
// input each row at t = 1. X itself is left as it is.
func (p *StoredPosterior) atFull(X *mat.Dense) *mat.Dense {
	if p.Space.cond != nil {
		X = mat.DenseCopyOf(X)
		for i := range X.RawMatrix().Rows {
			p.Space.canonical(X.RawRowView(i))
		}
	}
	if !p.fidelity {
		return X
	}
	return atFullTraining(X)
}

// Predict writes the posterior mean of f at the rows of X (unit-cube
// points of Dim coordinates) into mean and, when vr is not nil, its
// variance into vr; GP units, at full training in a study with a fidelity.
// On a conditional space a point is predicted where the GP sees it, with
// its inactive coordinates at their defaults.
func (p *StoredPosterior) Predict(X *mat.Dense, mean, vr []float64) {
	p.GP.Predict(p.atFull(X), mean, vr)
}

// MeanVar is the posterior mean and variance of f at u (GP units).
func (p *StoredPosterior) MeanVar(u []float64) (mean, vr float64) {
	m, v := make([]float64, 1), make([]float64, 1)
	p.Predict(mat.NewDense(1, len(u), u), m, v)
	return m[0], v[0]
}

// Joint is the joint posterior of f at the rows of X: means and
// covariance (GP units).
func (p *StoredPosterior) Joint(X *mat.Dense) ([]float64, *mat.SymDense) {
	return p.GP.Joint(p.atFull(X))
}

// Best returns x̄, the row of GP with the largest posterior mean — for a
// study with a fidelity, the largest once moved to full training — as its
// index, its unit-cube point (Dim coordinates) and that mean (GP units).
func (p *StoredPosterior) Best() (row int, u []float64, mean float64) {
	n, d := p.GP.N(), p.Dim()
	X := mat.NewDense(n, d, nil)
	for i := range n {
		X.SetRow(i, p.GP.X().RawRowView(i)[:d])
	}
	row, means := acq.BestMeanAt(p.GP, p.atFull(X))
	return row, X.RawRowView(row), means[row]
}

// Native maps a posterior mean in GP units to the objective's units; a
// warped model's within the fitted values' range widened by twice its
// span on each side (its exact map is infinite beyond the warp's image;
// see dataset.bounds).
func (p *StoredPosterior) Native(mean float64) float64 { return p.ds.native(mean) }

// NativeSD maps a posterior standard deviation in GP units to the
// objective's units. For a model fitted to warped values (the default
// acquisition on heavy-tailed outputs) the map is not linear; NativeSD
// then linearizes it at the mean of the fitted values.
func (p *StoredPosterior) NativeSD(sd float64) float64 {
	if p.ds.warped {
		return math.Abs(p.Native(sd)/2 - p.Native(-sd)/2) // halves first: the difference may overflow
	}
	return math.Min(sd*p.ds.scale, math.MaxFloat64) // c·σ overflows near the largest float64
}

// LoadPosterior rebuilds the StoredPosterior of study name in db. It
// refuses (without the O(n³) factorization) when more than maxN
// evaluations would condition it, and gives an error wrapping ErrNoModel
// when the study has no fitted model or its latest is local (ModelLocal).
func LoadPosterior(ctx context.Context, storage *Storage, name string, maxN int) (*StoredPosterior, error) {
	if err := checkStorage(storage); err != nil {
		return nil, err
	}
	return loadPosterior(ctx, storage.store(), name, maxN)
}

// loadPosterior is LoadPosterior on the store.
func loadPosterior(ctx context.Context, db store.Storage, name string, maxN int) (*StoredPosterior, error) {
	row, st, err := loadSettings(ctx, db, name)
	if err != nil {
		return nil, err
	}
	if n := len(st.Info.Outputs); n > 0 {
		return nil, &NoModelError{name, fmt.Sprintf("it has %d outputs, each with its own model; a stored posterior is a one-value study's", n)}
	}
	space, err := NewSpace(st.Info.Params)
	if err != nil {
		return nil, fmt.Errorf("study %q: stored space: %w", name, err)
	}
	d := space.Dim()
	fid := storedFidelity(st.Options, st.Info)
	inputs := d
	if fid != nil {
		inputs++
	}
	its, err := db.Iterations(ctx, row.ID)
	if err != nil {
		return nil, err
	}
	var ms *modelState
	t := 0
	for i := len(its) - 1; i >= 0 && ms == nil; i-- {
		var m modelState
		if its[i].Model != nil && json.Unmarshal(its[i].Model, &m) == nil && len(m.Params) == inputs+1 {
			ms, t = &m, its[i].Iteration
		}
	}
	trials, err := loadTrials(ctx, db, row.ID)
	if err != nil {
		return nil, err
	}
	if ms == nil {
		return nil, &NoModelError{name, noModelReason(trials)}
	}
	if ms.Local > 0 {
		return nil, &NoModelError{name, fmt.Sprintf("the model of iteration %d is local (a trust region over %d trials, see Options.Model), and only exact models can be shown", t, ms.Local)}
	}
	if err := space.checkTrials(trials); err != nil {
		return nil, fmt.Errorf("study %q: %w", name, err)
	}
	var before []Trial
	for _, tr := range trials {
		if tr.Iteration < t {
			before = append(before, tr)
		}
	}
	ds := newDataset(before, d, st.Info.Minimize)
	cats := space.Categories()
	if fid != nil {
		ds = fid.dataset(before, d, st.Info.Minimize)
		if cats != nil {
			cats = append(cats, 0) // as fitModel: the fidelity t is continuous
		}
	}
	if ms.Warped {
		ds.warp()
	}
	if ds.n() == 0 {
		return nil, &NoModelError{name, fmt.Sprintf("iteration %d has a model but no completed evaluation before it", t)}
	}
	if ds.n() > maxN {
		return nil, fmt.Errorf("study %q: the model of iteration %d conditions on %d evaluations, more than the %d allowed here", name, t, ds.n(), maxN)
	}
	k := newKernel(ms.Kernel, inputs, cats...).WithParams(ms.Params)
	g, err := gp.New(k, ms.Noise, ds.X, ds.y)
	if err != nil {
		return nil, fmt.Errorf("study %q: rebuild the model of iteration %d: %w", name, t, err)
	}
	return &StoredPosterior{Iteration: t, Space: space, GP: g, TrialIDs: ds.ids, Fitted: ms.N,
		AcqState: ms.AcqState, acquisition: st.Acquisition, ds: ds, fidelity: fid != nil}, nil
}

// noModelReason says why a study whose iterations stored no model has
// none, from its trials.
func noModelReason(trials []Trial) string {
	var inFlight, modelled, failed int
	for _, t := range trials {
		switch {
		case !t.Status.Done():
			inFlight++
		case t.Status.modelled():
			modelled++
		default:
			failed++
		}
	}
	switch {
	case modelled == 0 && failed > 0 && inFlight == 0:
		return fmt.Sprintf("no evaluation completed: all %d trials failed (tesbo-host trials shows why)", failed)
	case modelled == 0 && failed > 0:
		return fmt.Sprintf("no evaluation has completed yet: the %d finished so far failed, %d in flight (tesbo-host trials shows why)", failed, inFlight)
	case inFlight > 0 || len(trials) == 0:
		return "the initial design is still running"
	}
	return "no BO iteration has fitted a model yet (the initial design is done)"
}

// storedFidelity is the fidelity of a stored study with options o (nil
// when its GP has no fidelity input); its settings were checked when it
// was made.
func storedFidelity(o Options, info sdk.Info) *fidelity {
	f, _ := fidelityOf(o.MultiFidelity, o.Pruning, info)
	return f
}

// Slice returns the posterior along parameter j through the unit-cube
// point u: at m unit-cube values of coordinate j evenly spaced over
// [0, 1] (the others fixed at u), the native parameter values and the
// posterior mean and standard deviation of f in native units.
// On a conditional space a parameter inactive at u does not exist there,
// so its slice is flat (Predict) over the parameter's native range.
func (p *StoredPosterior) Slice(u []float64, j, m int) (x, mean, sd []float64) {
	d := p.Space.Dim()
	X := mat.NewDense(m, d, nil)
	x = make([]float64, m)
	for i := range m {
		row := X.RawRowView(i)
		copy(row, u)
		row[j] = float64(i) / float64(max(m-1, 1))
		x[i] = p.Space.NativeCoord(j, row[j])
	}
	mean, sd = make([]float64, m), make([]float64, m)
	p.Predict(X, mean, sd)
	for i := range m {
		mean[i], sd[i] = p.Native(mean[i]), p.NativeSD(math.Sqrt(sd[i]))
	}
	return x, mean, sd
}
