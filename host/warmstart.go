package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// Warm starts (Options.WarmStart, tesbo-host run --warm-start STUDY).
//
// A new study starts from the completed trials of earlier studies in the
// same database. Their parameters are matched to the new space by name (a
// parameter of the same name must have the same kind; a categorical's
// choices are matched by name). A trial is skipped, and counted in the
// log, when it lacks a parameter of the new space or a value lies outside
// the new bounds or choices; parameters the new space does not have are
// dropped. Options.WarmStartMode chooses what the trials become:
//
//   - WarmObservations (the default): the objective is the same, so the
//     trials are observations. They are stored in the new study as
//     complete trials of ImportedIteration (Trial.Meta "imported_from"
//     names the source study), fitted by the GP like any other, and use
//     up no budget and none of the initial design. The database then holds
//     everything the study's model depends on, so a warm-started study
//     resumes bitwise. The acquisition learns how many of its observations
//     were imported (acq.State.Imported): the default one evaluates the
//     posterior-mean maximizer first (tes.Deliver).
//   - WarmPrior: the objective changed (another data set, another
//     fidelity), so the old values are not observations of it. They are
//     used as a prior on where to look: the initial design opens with the
//     old studies' best points (best first, in each source's own
//     direction), as Feurer, Springenberg & Hutter (AAAI 2015) initialize
//     Bayesian optimization with the best configurations of related runs;
//     the rest of the design is the usual Latin hypercube, and the GP sees
//     only the new objective's values. The points are stored in the
//     study's settings. This is deliberately not a GP prior mean equal to
//     the old posterior mean: every acquisition (TES's conditioning on X*,
//     its EP, the sample paths) works on a zero-mean GP of standardized
//     values, and an old mean in another objective's units would need a
//     scale fitted to the new values besides.
//
// With Options.Fixed the imported trials are imported wherever their
// pinned parameters lie (the model uses all trials).
//
// Trials keep their intermediate values (sdk.Report), so a pruner's
// history and the curve model see the source's learning curves. A trial
// the source stopped early (pruned, or run to a lower fidelity) is
// imported as pruned, with its last value and step, when this study stops
// trials itself (a pruner or multi-fidelity) and so models pruned trials;
// otherwise its value is not the objective's and it is skipped. A trial
// that reported a step past this objective's sdk.Info.MaxStep is skipped.
//
// An objective with several outputs imports observations only: every
// output must be one of the source's of the same name and goal (a
// constraint's bound may differ), each imported trial carries them all,
// and each output's GP fits them as any other trial's (matchOutputs). The
// prior mode ranks points by one value and refuses several outputs.

// ImportedIteration is the Iteration of the trials a warm start imported
// as observations (WarmObservations).
const ImportedIteration = -2

// Warm-start modes (Options.WarmStartMode).
const (
	WarmObservations = "observations"
	WarmPrior        = "prior"
)

// MaxWarmStart bounds Options.WarmStart (source studies).
const MaxWarmStart = 100

// imported is what a warm start read from its source studies.
type imported struct {
	trials  []Trial     // matched trials, in source order (X native, U unit, Value, Status, Intermediates)
	best    [][]float64 // WarmPrior: the native points for the design, best first
	skipped int         // trials lacking a parameter or outside the space
	stopped int         // pruned trials skipped: this study does not model them
	repeats int         // trials skipped as one already imported (the same evaluation through another source)
	dropped []string    // source parameters the space does not have
	others  []string    // source studies of another objective (by name)
}

// origin names the evaluation behind trial t of study name: the trial a
// warm start imported it from (its imported_from and imported_id), or t
// itself. Two sources holding the same evaluation (a study and one that
// warm-started from it) give it the same origin, and it is imported once.
func origin(name string, t Trial) [2]string {
	if from, ok := t.Meta["imported_from"]; ok && t.Iteration == ImportedIteration {
		return [2]string{from, t.Meta["imported_id"]}
	}
	return [2]string{name, strconv.Itoa(t.ID)}
}

// checkWarmStart validates the warm-start options (after Normalized).
func (o Options) checkWarmStart() error {
	if o.WarmStartMode != "" && o.WarmStartMode != WarmObservations && o.WarmStartMode != WarmPrior {
		return fmt.Errorf("unknown warm-start mode %q: known ones are %s, %s", o.WarmStartMode, WarmObservations, WarmPrior)
	}
	if len(o.WarmStart) == 0 {
		return nil
	}
	if o.WarmStartMode != WarmObservations && o.WarmStartMode != WarmPrior {
		return fmt.Errorf("unknown warm-start mode %q: known ones are %s, %s", o.WarmStartMode, WarmObservations, WarmPrior)
	}
	if len(o.WarmStart) > MaxWarmStart {
		return fmt.Errorf("%d warm-start studies, at most %d", len(o.WarmStart), MaxWarmStart)
	}
	for i, name := range o.WarmStart {
		if slices.Contains(o.WarmStart[:i], name) {
			return fmt.Errorf("warm-start study %q given twice", name)
		}
		if name == o.Name {
			return fmt.Errorf("study %q cannot warm-start from itself", name)
		}
	}
	return nil
}

// readWarmStart reads the source studies of Options.WarmStart from db and
// matches their completed trials to the study's space.
func (s *Study) readWarmStart(ctx context.Context, db store.Storage) (*imported, error) {
	if len(s.info.Outputs) > 0 && s.opts.WarmStartMode == WarmPrior {
		return nil, fmt.Errorf("warm start: objective %s has several outputs, and the prior mode ranks the source trials by one value: use the observations mode", s.info.Name)
	}
	imp := &imported{}
	var pts []ranked
	seen := map[[2]string]bool{}
	for _, name := range s.opts.WarmStart {
		row, st, err := loadSettings(ctx, db, name)
		if errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("warm start: no study %q in this database (see 'tesbo-host serve' or the study names you ran)", name)
		}
		if err != nil {
			return nil, fmt.Errorf("warm start from %q: %w", name, err)
		}
		outs, err := matchOutputs(st.Info.Outputs, s.info.Outputs)
		if err != nil {
			return nil, fmt.Errorf("warm start from %q: %w", name, err)
		}
		if len(s.info.Outputs) == 0 && s.opts.WarmStartMode == WarmObservations && st.Info.Minimize != s.info.Minimize {
			return nil, fmt.Errorf("warm start from %q: its objective %s the value, this one does the opposite: not the same objective (use the prior mode)", name, direction(st.Info.Minimize))
		}
		if st.Info.Name != s.info.Name {
			imp.others = append(imp.others, name)
		}
		m, err := matchParams(st.Info.Params, s.space.params)
		if err != nil {
			return nil, fmt.Errorf("warm start from %q: %w", name, err)
		}
		for _, p := range st.Info.Params {
			if s.space.index(p.Name) < 0 && !slices.Contains(imp.dropped, p.Name) {
				imp.dropped = append(imp.dropped, p.Name)
			}
		}
		ts, err := loadTrials(ctx, db, row.ID)
		if err != nil {
			return nil, fmt.Errorf("warm start from %q: %w", name, err)
		}
		for _, t := range ts {
			switch {
			case t.Status == Pruned && (!s.stopsTrials() || s.opts.WarmStartMode == WarmPrior):
				imp.stopped++
				continue
			case t.Status != Complete && t.Status != Pruned:
				continue
			case s.info.MaxStep > 0 && lastStep(t.Intermediates) > s.info.MaxStep:
				imp.skipped++
				continue
			case seen[origin(name, t)]:
				imp.repeats++
				continue
			}
			seen[origin(name, t)] = true
			x, ok := m.point(t.X)
			var u []float64
			if ok {
				u, err = s.space.ToUnit(x)
				ok = err == nil
			}
			if !ok {
				imp.skipped++
				continue
			}
			// A parameter inactive here but active there (a study of the
			// flattened space) is stored as inactive: NaN, as a trial of
			// this study would be.
			x = s.space.activeOnly(x)
			tr := Trial{X: x, U: u, Value: t.Value, Status: t.Status, Intermediates: slices.Clone(t.Intermediates),
				Meta: map[string]string{"imported_from": name, "imported_id": strconv.Itoa(t.ID)}}
			if outs != nil {
				if tr.Outputs, ok = outs.values(t.Outputs); !ok {
					imp.skipped++
					continue
				}
				tr.Value = resultValue(s.info, sdk.Result{Outputs: tr.Outputs})
			}
			imp.trials = append(imp.trials, tr)
			v := t.Value
			if st.Info.Minimize {
				v = -v
			}
			pts = append(pts, ranked{x, v})
		}
	}
	if len(imp.trials) == 0 {
		// Nothing fits: the study would start with neither the old trials
		// nor (a warm start's default) an initial design.
		return nil, fmt.Errorf("warm start: no trial of %s can be used here (%d skipped for a parameter missing or outside this space's bounds, %d pruned ones this study does not model): start without --warm-start, or from a study of this space", strings.Join(s.opts.WarmStart, ", "), imp.skipped, imp.stopped)
	}
	if s.opts.WarmStartMode == WarmPrior {
		imp.pickBest(pts, s.opts.Init)
	}
	return imp, nil
}

// ranked is a source trial's point and its value, maximizing.
type ranked struct {
	x     []float64
	value float64
}

// pickBest makes the prior mode's design points (at most n distinct,
// best first) the import, in place of its trials.
func (imp *imported) pickBest(pts []ranked, n int) {
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].value > pts[j].value })
	for _, p := range pts {
		if len(imp.best) == n {
			break
		}
		if !slices.ContainsFunc(imp.best, func(b []float64) bool { return slices.EqualFunc(b, p.x, sameCoord) }) {
			imp.best = append(imp.best, p.x)
		}
	}
	imp.trials = nil
}

// stopsTrials reports whether the study stops evaluations early (a pruner
// or multi-fidelity), and so models pruned trials.
func (s *Study) stopsTrials() bool {
	return s.opts.Pruning.Rule != "" || s.opts.MultiFidelity.Enabled
}

// lastStep is the last reported step of a curve, -1 for none.
func lastStep(p []Intermediate) int {
	if len(p) == 0 {
		return -1
	}
	return p[len(p)-1].Step
}

// sameCoord compares two coordinates of native points, an inactive one
// (NaN) equal only to another.
func sameCoord(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func direction(minimize bool) string {
	if minimize {
		return "minimizes"
	}
	return "maximizes"
}

// outputMatch maps a source study's outputs to the study's: from[k] is the
// source index of the study's output k.
type outputMatch struct{ from []int }

// matchOutputs matches the study's outputs dst to the source's src by
// name (nil, nil when neither has several outputs). Every output of the
// study must be one of the source's with the same goal: the imported
// values are observations of the same quantities. A constraint's bound
// may differ (the measurement is the same; the bound is what the study
// requires of it), and source outputs the study does not have are
// dropped.
func matchOutputs(src, dst []sdk.Output) (*outputMatch, error) {
	switch {
	case len(src) == 0 && len(dst) == 0:
		return nil, nil
	case len(dst) == 0:
		return nil, fmt.Errorf("it has %d outputs and this objective one value: not the same objective", len(src))
	case len(src) == 0:
		return nil, fmt.Errorf("it has one value and this objective %d outputs: not the same objective", len(dst))
	}
	m := &outputMatch{from: make([]int, len(dst))}
	for k, o := range dst {
		j := slices.IndexFunc(src, func(p sdk.Output) bool { return p.Name == o.Name })
		if j < 0 {
			return nil, fmt.Errorf("it has no output %s: outputs are matched by name", o.Name)
		}
		if src[j].Goal != o.Goal {
			return nil, fmt.Errorf("output %s is a %v there and a %v here: not the same objective", o.Name, src[j].Goal, o.Goal)
		}
		m.from[k] = j
	}
	return m, nil
}

// values maps one source trial's outputs; ok is false when the trial has
// not all of them.
func (m *outputMatch) values(src []float64) ([]float64, bool) {
	out := make([]float64, len(m.from))
	for k, j := range m.from {
		if j >= len(src) {
			return nil, false
		}
		out[k] = src[j]
	}
	return out, true
}

// paramMatch maps a source study's points into the study's space: for
// each parameter of the space, the source coordinate of the same name (-1:
// none) and, for a categorical, the new index of each source choice (-1:
// not a choice here).
type paramMatch struct {
	from    []int
	choices [][]int
}

// matchParams matches the source parameters to the space's by name; a
// parameter of the same name and another kind is an error.
func matchParams(src, dst []sdk.Param) (*paramMatch, error) {
	m := &paramMatch{from: make([]int, len(dst)), choices: make([][]int, len(dst))}
	for i, p := range dst {
		j := slices.IndexFunc(src, func(q sdk.Param) bool { return q.Name == p.Name })
		m.from[i] = j
		if j < 0 {
			continue
		}
		if src[j].Kind != p.Kind {
			return nil, fmt.Errorf("parameter %s is %v there and %v here: parameters are matched by name and kind", p.Name, src[j].Kind, p.Kind)
		}
		if p.Kind == sdk.Categorical {
			m.choices[i] = make([]int, len(src[j].Choices))
			for c, name := range src[j].Choices {
				m.choices[i][c] = slices.Index(p.Choices, name)
			}
		}
	}
	return m, nil
}

// point maps a source point into the space's coordinates; ok is false
// when it lacks a parameter or a choice (bounds are checked by ToUnit).
func (m *paramMatch) point(x []float64) ([]float64, bool) {
	out := make([]float64, len(m.from))
	for i, j := range m.from {
		if j < 0 || j >= len(x) {
			return nil, false
		}
		out[i] = x[j] // NaN (inactive there) is refused by ToUnit unless inactive here too
		if ch := m.choices[i]; ch != nil && !math.IsNaN(x[j]) {
			c := int(x[j])
			if c < 0 || c >= len(ch) || ch[c] < 0 {
				return nil, false
			}
			out[i] = float64(ch[c])
		}
	}
	return out, true
}

// storeImported records the imported trials (WarmObservations) as
// complete or pruned trials of ImportedIteration, with their intermediate
// values, in one transaction (store's AddFinished): a process stopped
// while importing leaves all of them or none (then OpenStudy imports
// them), never imports in flight that a resumed study would evaluate.
func (s *Study) storeImported(ctx context.Context, imp *imported) error {
	if len(imp.trials) == 0 {
		return nil
	}
	ts := make([]Trial, len(imp.trials))
	now := time.Now()
	for i, t := range imp.trials {
		ts[i] = Trial{ID: len(s.trials) + i, Iteration: ImportedIteration, Index: i, X: t.X, U: t.U,
			Status: t.Status, Value: t.Value, Outputs: t.Outputs, Intermediates: t.Intermediates,
			Attempts: 1, FinishedAt: now, Meta: t.Meta, Names: s.space.names}
	}
	if err := addFinished(ctx, s.db, s.id, store.Iteration{Iteration: ImportedIteration}, ts); err != nil {
		return fmt.Errorf("warm start: %w", err)
	}
	s.mu.Lock()
	s.trials = append(s.trials, ts...)
	s.version += len(ts)
	s.mu.Unlock()
	return nil
}

// importMissing stores the imports of a warm start of observations that
// the study's creation did not get to (the process stopped between
// storing the study and its imports): a study with such a warm start and
// no trial at all imports them now, as its creation would have.
func (s *Study) importMissing(ctx context.Context, db store.Storage) error {
	if len(s.opts.WarmStart) == 0 || s.opts.WarmStartMode != WarmObservations || len(s.trials) > 0 {
		return nil
	}
	imp, err := s.readWarmStart(ctx, db)
	if err != nil {
		return err
	}
	s.logWarmStart(imp)
	return s.storeImported(ctx, imp)
}

// checkImportBudget refuses a warm start whose imports and the budget
// (o's Init + Iters·Batch) make more than MaxTrials trials: the model is
// fitted on the imports too, so they count toward the bound on its data.
// Checked before the study is stored, and again when a resume raises the
// budget.
func checkImportBudget(imported int, o Options) error {
	budget := evaluationBudget(o.Init, o.Iters, o.Batch)
	if imported == 0 || imported+budget <= MaxTrials {
		return nil
	}
	return fmt.Errorf("warm start: %d imported trials and a budget of %d evaluations make %d trials, more than %d (MaxTrials): every iteration fits a GP on all of them; warm-start from fewer trials or lower --iters", imported, budget, imported+budget, MaxTrials)
}

// importedCount counts the trials a warm start imported.
func importedCount(ts []store.Trial) int {
	n := 0
	for _, t := range ts {
		if t.Iteration == ImportedIteration {
			n++
		}
	}
	return n
}

// importedTrials counts the trials a warm start imported (complete or
// pruned, so all in the model's data): acq.State.Imported.
func (s *Study) importedTrials() int {
	n := 0
	for _, t := range s.trials {
		if t.Iteration == ImportedIteration {
			n++
		}
	}
	return n
}

// logWarmStart reports what a warm start imported and skipped.
func (s *Study) logWarmStart(imp *imported) {
	ev := s.log.Info().Strs("from", s.opts.WarmStart).Str("mode", s.opts.WarmStartMode).Int("skipped", imp.skipped)
	if imp.stopped > 0 {
		// Their values are where the source stopped them, not the
		// objective's: only a study that stops trials models them.
		ev = ev.Int("skipped_pruned", imp.stopped)
	}
	if len(imp.dropped) > 0 {
		ev = ev.Strs("dropped_params", imp.dropped)
	}
	if imp.repeats > 0 {
		ev = ev.Int("skipped_repeats", imp.repeats)
	}
	if len(imp.others) > 0 && s.opts.WarmStartMode == WarmObservations {
		s.log.Warn().Strs("studies", imp.others).Str("objective", s.info.Name).
			Msg("warm start from studies of another objective (matched by parameter names): their values are read as this objective's; use the prior mode if it changed")
	}
	if s.opts.WarmStartMode == WarmPrior {
		ev.Int("design_points", len(imp.best)).Msg("warm start: the initial design opens with the source studies' best points")
		return
	}
	ev.Int("imported", len(imp.trials)).Msg("warm start: imported the source studies' trials as observations")
}
