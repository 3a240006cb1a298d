package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/tesbo/tesbo/internal/safetext"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

func (s *Server) apiStudies(w http.ResponseWriter, r *http.Request) {
	sums, err := s.loadSummaries(r.Context())
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.writeJSON(w, r, map[string]any{"studies": sums})
}

// paramJSON is a parameter of the search space.
type paramJSON struct {
	Name string  `json:"name"`
	Kind string  `json:"kind"` // float, logfloat, int or categorical
	Low  float64 `json:"low"`
	High float64 `json:"high"` // a categorical: 0 and its last index
	// Choices name a categorical's values (indices 0..High).
	Choices []string `json:"choices,omitempty"`
}

// iterationJSON is a BO iteration: its timings and, once finished, its
// record's values.
type iterationJSON struct {
	Iter     int     `json:"iter"`
	HasModel bool    `json:"has_model"`
	FitS     float64 `json:"fit_s"`
	ProposeS float64 `json:"propose_s"`
	// The rest is the record of a finished iteration (Done).
	Done         bool     `json:"done"`
	Evals        int      `json:"evals"`
	EvalS        float64  `json:"eval_s"`
	BestValue    *float64 `json:"best_value"`
	BestObserved *float64 `json:"best_observed"`
	Regret       *float64 `json:"regret"`
	BestX        point    `json:"best_x"`
	// BestChoices names best_x's categorical values.
	BestChoices map[string]string `json:"best_choices,omitempty"`
}

// studyJSON is /api/study's answer.
type studyJSON struct {
	Summary    *summary        `json:"summary"`
	Params     []paramJSON     `json:"params"`
	Seed       string          `json:"seed"`
	Batch      int             `json:"batch"`
	Iterations []iterationJSON `json:"iterations"`
	// Steps says that the study stops trials early (a pruner or
	// multi-fidelity): the trial table shows each trial's last step.
	Steps bool `json:"steps"`
}

func (s *Server) apiStudy(w http.ResponseWriter, r *http.Request) {
	answerStudy(s, w, r, s.loadStudy)
}

// answerStudy answers a request naming a study (?study=NAME) with
// load(name) as JSON, or with the error page or status load's error calls
// for.
func answerStudy[T any](s *Server, w http.ResponseWriter, r *http.Request, load func(context.Context, string) (T, error)) {
	name, err := studyName(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	v, err := load(r.Context(), name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	s.writeJSON(w, r, v)
}

func (s *Server) loadStudy(ctx context.Context, name string) (*studyJSON, error) {
	sm, err := s.loadSummary(ctx, name)
	if err != nil {
		return nil, err
	}
	its, err := s.db.Iterations(ctx, sm.id)
	if err != nil {
		return nil, err
	}
	out := &studyJSON{Summary: sm, Seed: fmt.Sprint(sm.opts.Seed), Batch: sm.opts.Batch,
		Iterations: make([]iterationJSON, 0, len(its)), Steps: sm.opts.Pruning.Rule != "" || sm.opts.MultiFidelity.Enabled}
	for _, p := range sm.params {
		lo, hi := p.Bounds()
		out.Params = append(out.Params, paramJSON{Name: p.Name, Kind: p.Kind.String(), Low: lo, High: hi, Choices: p.Choices})
	}
	for _, it := range its {
		ij, err := iterationOf(it)
		if err != nil {
			return nil, fmt.Errorf("study %q: %w", name, err)
		}
		out.Iterations = append(out.Iterations, ij)
	}
	return out, nil
}

// iterationOf converts a stored iteration row.
func iterationOf(it store.Iteration) (iterationJSON, error) {
	ij := iterationJSON{Iter: it.Iteration, HasModel: it.Model != nil, FitS: it.FitSeconds, ProposeS: it.ProposeSeconds}
	if it.Record == nil {
		return ij, nil
	}
	var rec host.Record
	if err := json.Unmarshal(it.Record, &rec); err != nil {
		return ij, fmt.Errorf("iteration %d: bad stored record: %w", it.Iteration, err)
	}
	ij.Done, ij.Evals, ij.EvalS = true, rec.Evals, rec.EvalS
	ij.BestValue, ij.BestObserved, ij.Regret, ij.BestX = rec.BestValue, rec.BestObserved, rec.Regret, rec.BestX
	ij.BestChoices = rec.BestChoices
	return ij, nil
}

// trialJSON is a trial as the API sends it (X in the order of the study's
// parameters).
type trialJSON struct {
	ID        int      `json:"id"`
	Iteration int      `json:"iteration"`
	Index     int      `json:"index"`
	Status    string   `json:"status"`
	Value     *float64 `json:"value"`
	Error     string   `json:"error,omitempty"`
	Attempts  int      `json:"attempts"`
	X         point    `json:"x"`
	// Choices name the categorical parameters' values (X holds the
	// choices' indices), as 'tesbo-host trials --format json' does; only
	// in /api/trials' answer.
	Choices  map[string]string `json:"choices,omitempty"`
	Created  *time.Time        `json:"created,omitempty"`
	Started  *time.Time        `json:"started,omitempty"`
	Finished *time.Time        `json:"finished,omitempty"`
	EvalS    float64           `json:"eval_s"`
	Meta     map[string]string `json:"meta,omitempty"`
	// Step is the last step the evaluation reported (sdk.Report; a pruned
	// trial's value is the one reported there), Intermediates every
	// reported [step, value]: the trial's learning curve.
	Step          *int         `json:"step,omitempty"`
	Intermediates [][2]float64 `json:"intermediates,omitempty"`
	// Outputs are a complete trial's outputs (several-output objectives),
	// in the order of the summary's outputs.
	Outputs []float64 `json:"outputs,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func trialOf(t store.Trial) trialJSON {
	tj := trialJSON{ID: t.ID, Iteration: t.Iteration, Index: t.Index, Status: string(t.Status), Error: t.Error,
		Attempts: t.Attempts, X: t.X, Created: timePtr(t.CreatedAt), Started: timePtr(t.StartedAt),
		Finished: timePtr(t.FinishedAt), EvalS: t.EvalSeconds, Meta: t.Meta}
	if t.Status == store.Complete || t.Status == store.Pruned {
		v := t.Value
		tj.Value = &v
		tj.Outputs = t.Outputs
	}
	if n := len(t.Intermediates); n > 0 {
		step := t.Intermediates[n-1].Step
		tj.Step = &step
		tj.Intermediates = make([][2]float64, n)
		for i, p := range t.Intermediates {
			tj.Intermediates[i] = [2]float64{float64(p.Step), p.Value}
		}
	}
	if tj.X == nil {
		tj.X = []float64{}
	}
	return tj
}

// trialsJSON is /api/trials' JSON answer (and download).
type trialsJSON struct {
	Study  string      `json:"study"`
	Params []string    `json:"params"`
	Trials []trialJSON `json:"trials"`
}

func (s *Server) apiTrials(w http.ResponseWriter, r *http.Request) {
	name, err := studyName(r)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	format := r.URL.Query().Get("format")
	if format != "" && format != "json" && format != "csv" {
		s.failErr(w, r, fmt.Errorf("%w: format %q: want json or csv", errBadRequest, format))
		return
	}
	sm, err := s.loadSummary(r.Context(), name)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	trials, err := s.db.Trials(r.Context(), sm.id)
	if err != nil {
		s.failErr(w, r, err)
		return
	}
	if r.URL.Query().Get("download") != "" {
		ext := "json"
		if format == "csv" {
			ext = "csv"
		}
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", fileName(name)+"-trials."+ext))
	}
	if format == "csv" {
		s.writeCSV(w, sm, trials)
		return
	}
	out := trialsJSON{Study: name, Params: paramNames(sm), Trials: make([]trialJSON, len(trials))}
	for i, t := range trials {
		out.Trials[i] = trialOf(t)
		out.Trials[i].Choices = host.ChoiceNames(sm.params, t.X)
	}
	s.writeJSON(w, r, out)
}

// paramCells formats a trial's parameters for the CSV: a categorical's
// choice name, else the number in Go's shortest form.
func paramCells(params []sdk.Param, x []float64) []string {
	out := make([]string, len(x))
	for j, v := range x {
		if j < len(params) {
			out[j] = params[j].Format(v)
			if params[j].Kind == sdk.Categorical {
				out[j] = safetext.CSVCell(out[j]) // a choice is text
			}
		} else {
			out[j] = strconv.FormatFloat(v, 'g', -1, 64)
		}
	}
	return out
}

func paramNames(sm *summary) []string {
	names := make([]string, len(sm.params))
	for i, p := range sm.params {
		names[i] = p.Name
	}
	return names
}

// fileName turns a study name into a safe file name.
func fileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c == '-' || c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 100 {
		b = b[:100]
	}
	return string(b)
}

// point is a point in native units whose NaN coordinates (the inactive
// parameters of a conditional space) are written as null.
type point []float64

// MarshalJSON implements json.Marshaler.
func (p point) MarshalJSON() ([]byte, error) {
	if p == nil {
		return []byte("null"), nil
	}
	out := make([]*float64, len(p))
	for i := range p {
		if !math.IsNaN(p[i]) {
			out[i] = &p[i]
		}
	}
	return json.Marshal(out)
}
