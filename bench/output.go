package bench

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tesbo/tesbo/host"
)

// runsHeader is the header of runs.csv: one row per run × BO iteration.
// seed is the run's seed index, study_seed the derived study seed; regret is
// the noise-free immediate regret f* − f(x̄) (empty when f* is unknown) and
// log10_regret its log10 (floored at RegretFloor); best_value is the
// objective's value at x̄; fit_s, propose_s and eval_s are the host's
// timings in seconds; fallback is 1 when the batch came from the host's
// space-filling fallback; best_eval_regret is the user's rule: the
// noise-free regret of the completed trial with the best observed value so
// far (empty when unknown); best_true_regret the oracle rule: the smallest
// noise-free regret among the completed trials so far. On the shipped
// several-output problems (multiRegrets) regret and best_eval_regret are
// the user's rule, the hypervolume regret MaxHV − HV of the evaluated
// Pareto set (or, with one objective under constraints, the regret of the
// best feasible trial), and best_true_regret the oracle rule over every
// complete trial, as BoTorch's runner reports it.
var runsHeader = []string{"problem", "acquisition", "batch", "seed", "study_seed", "iteration", "evaluations",
	"regret", "log10_regret", "best_value", "fit_s", "propose_s", "eval_s", "fallback", "best_eval_regret", "best_true_regret"}

// write writes runs.csv, summary.md and the figures for runs into dir and
// returns the files written. hist may be nil.
func write(dir string, s *Suite, runs []runResult, hist *History) ([]string, error) {
	var files []string
	p := filepath.Join(dir, RunsFile)
	if err := writeFileAtomic(p, func(f *os.File) error { return writeRunsCSV(f, runs) }); err != nil {
		return files, fmt.Errorf("write %s: %w", RunsFile, err)
	}
	files = append(files, p)
	groups := groupRuns(s, runs)
	figs, err := writeFigures(dir, s, groups)
	files = append(files, figs...)
	if err != nil {
		return files, err
	}
	p = filepath.Join(dir, SummaryFile)
	md := summaryMarkdown(s, runs, groups, hist)
	if err := writeFileAtomic(p, func(f *os.File) error { _, err := f.WriteString(md); return err }); err != nil {
		return files, fmt.Errorf("write %s: %w", SummaryFile, err)
	}
	files = append(files, p)
	if len(s.Acquisitions) > 1 {
		p = filepath.Join(dir, comparisonFile)
		md := comparisonMarkdown(s, groups)
		if err := writeFileAtomic(p, func(f *os.File) error { _, err := f.WriteString(md); return err }); err != nil {
			return files, fmt.Errorf("write %s: %w", comparisonFile, err)
		}
		files = append(files, p)
	}
	return files, nil
}

// writeFileAtomic writes through a temporary file renamed over path, so a
// reader (or a kill) never sees half a file.
func writeFileAtomic(path string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

func fmtPtr(x *float64) string {
	if x == nil {
		return ""
	}
	return fmtFloat(*x)
}

func writeRunsCSV(f *os.File, runs []runResult) error {
	w := csv.NewWriter(f)
	if err := w.Write(runsHeader); err != nil {
		return err
	}
	for _, r := range runs {
		for _, row := range r.Rows {
			lr := ""
			if row.Regret != nil {
				lr = fmtFloat(log10Regret(*row.Regret))
			}
			fb := "0"
			if row.Fallback {
				fb = "1"
			}
			rec := []string{r.Spec.Problem.Label(), r.Spec.Acquisition, strconv.Itoa(r.Spec.Batch),
				strconv.Itoa(r.Spec.Index), strconv.FormatUint(r.Spec.Seed, 10), strconv.Itoa(row.Iter),
				strconv.Itoa(row.Evals), fmtPtr(row.Regret), lr, fmtPtr(row.BestValue),
				fmtFloat(row.FitS), fmtFloat(row.ProposeS), fmtFloat(row.EvalS), fb, fmtPtr(row.BestEvalRegret), fmtPtr(row.BestTrueRegret)}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
	}
	w.Flush()
	return w.Error()
}

// csvRow is one parsed row of runs.csv.
type csvRow struct {
	Problem, Acquisition string
	Batch, Seed          int
	StudySeed            uint64
	row
}

// ReadRunsCSV parses a runs.csv written by Write (for re-plotting or
// checking results without the database).
func ReadRunsCSV(path string) ([]csvRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// Files written before best_eval_regret and best_true_regret existed
	// lack the last columns.
	if len(recs) == 0 || !slices.ContainsFunc([]int{0, 1, 2}, func(drop int) bool {
		return slices.Equal(recs[0], runsHeader[:len(runsHeader)-drop])
	}) {
		return nil, fmt.Errorf("%s: not a runs.csv (header %v)", path, recs)
	}
	out := make([]csvRow, 0, len(recs)-1)
	for i, rec := range recs[1:] {
		row, err := parseCSVRow(rec)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+2, err)
		}
		out = append(out, row)
	}
	return out, nil
}

func parseCSVRow(rec []string) (csvRow, error) {
	var r csvRow
	var errs []error
	atoi := func(s string) int {
		v, err := strconv.Atoi(s)
		errs = append(errs, err)
		return v
	}
	atof := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		errs = append(errs, err)
		return v
	}
	opt := func(s string) *float64 {
		if s == "" {
			return nil
		}
		v := atof(s)
		return &v
	}
	r.Problem, r.Acquisition = rec[0], rec[1]
	r.Batch, r.Seed = atoi(rec[2]), atoi(rec[3])
	ss, err := strconv.ParseUint(rec[4], 10, 64)
	errs = append(errs, err)
	r.StudySeed = ss
	r.Iter, r.Evals = atoi(rec[5]), atoi(rec[6])
	r.Regret = opt(rec[7])
	if lr := opt(rec[8]); (lr == nil) != (r.Regret == nil) {
		errs = append(errs, fmt.Errorf("log10_regret %q does not match regret %q", rec[8], rec[7]))
	}
	r.BestValue = opt(rec[9])
	r.FitS, r.ProposeS, r.EvalS = atof(rec[10]), atof(rec[11]), atof(rec[12])
	r.Fallback = rec[13] == "1"
	if len(rec) > 14 {
		r.BestEvalRegret = opt(rec[14])
	}
	if len(rec) > 15 {
		r.BestTrueRegret = opt(rec[15])
	}
	return r, errors.Join(errs...)
}

// group is one (problem, batch) table and figure pair.
type group struct {
	key  groupKey
	acqs []string
	runs map[string][]runResult // by acquisition
}

// groupRuns groups runs by (problem, batch) in the suite's order.
func groupRuns(s *Suite, runs []runResult) []*group {
	var gs []*group
	idx := map[groupKey]*group{}
	for _, p := range s.Problems {
		for _, q := range s.batches() {
			k := groupKey{p.Label(), q}
			g := &group{key: k, acqs: s.Acquisitions, runs: map[string][]runResult{}}
			idx[k] = g
			gs = append(gs, g)
		}
	}
	for _, r := range runs {
		if g := idx[groupKey{r.Spec.Problem.Label(), r.Spec.Batch}]; g != nil {
			g.runs[r.Spec.Acquisition] = append(g.runs[r.Spec.Acquisition], r)
		}
	}
	return gs
}

// slug makes a label safe for a file name.
func slug(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// acqStats is one row of a summary table.
type acqStats struct {
	acq                    string
	runs, complete, failed int
	finals                 []float64 // log10 final regrets of complete runs
	bestEvals              []float64 // log10 final best-evaluated regrets
	floored                int       // final regrets below RegretFloor
	medPropose, medFit     float64
	fallbacks              int
}

func statsOf(acqName string, runs []runResult, iters int) acqStats {
	st := acqStats{acq: acqName, runs: len(runs)}
	var props, fits []float64
	for _, r := range runs {
		if r.Status == StatusFailed {
			st.failed++
		}
		if fr, ok := finalBestEval(r, iters); ok {
			st.bestEvals = append(st.bestEvals, log10Regret(fr))
		}
		if fr, ok := finalRegret(r, iters); ok {
			st.complete++
			st.finals = append(st.finals, log10Regret(fr))
			if fr < RegretFloor {
				st.floored++
			}
		}
		for _, row := range r.Rows {
			props = append(props, row.ProposeS)
			fits = append(fits, row.FitS)
			if row.Fallback {
				st.fallbacks++
			}
		}
	}
	st.medPropose, st.medFit = median(props), median(fits)
	return st
}

func fmtStat(x float64, prec int) string {
	if math.IsNaN(x) {
		return "—"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

func fmtSecs(x float64) string {
	switch {
	case math.IsNaN(x):
		return "—"
	case x < 0.01:
		return strconv.FormatFloat(x, 'g', 2, 64)
	case x < 10:
		return strconv.FormatFloat(x, 'f', 3, 64)
	}
	return strconv.FormatFloat(x, 'f', 1, 64)
}

// summaryMarkdown renders summary.md.
func summaryMarkdown(s *Suite, runs []runResult, groups []*group, hist *History) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Benchmark summary\n\n")
	if s.Command != "" {
		fmt.Fprintf(&b, "```\n%s\n```\n\n", s.Command)
	}
	var labels []string
	for _, p := range s.Problems {
		labels = append(labels, p.Label())
	}
	var bs []string
	for _, q := range s.batches() {
		bs = append(bs, strconv.Itoa(q))
	}
	fmt.Fprintf(&b, "- problems: %s; acquisitions: %s; batch sizes |B|: %s\n",
		strings.Join(labels, ", "), strings.Join(s.Acquisitions, ", "), strings.Join(bs, ", "))
	fmt.Fprintf(&b, "- %d seed(s) per combination, %s BO iterations per run, initial design %s\n",
		s.seeds(), s.itersDescription(), s.initDescription())
	if h := s.halvesDescription(); h != "" {
		fmt.Fprintf(&b, "- %s\n", h)
	}
	fmt.Fprintf(&b, "- observation noise variance %s; GP kernel %s, prior %s; |X*| %s; recommendation %s\n",
		s.noiseDescription(), orDefault(s.Kernel, "se"), orDefault(s.GPPrior, "scaled"), s.trustedDescription(), orDefault(s.Recommend, "auto"))
	if s.Model != "" && s.Model != host.ModelAuto {
		fmt.Fprintf(&b, "- GP model %s%s\n", s.Model, s.localDescription())
	}
	if len(s.Params) > 0 {
		var kv []string
		for k, v := range s.Params {
			kv = append(kv, k+"="+v)
		}
		fmt.Fprintf(&b, "- parameters: %s\n", strings.Join(kv, ", "))
	}
	var complete, failed, incomplete int
	for _, r := range runs {
		_, ok := finalRegret(r, s.itersOf(r.Spec.Problem))
		switch {
		case ok:
			complete++
		case r.Status == StatusFailed:
			failed++
		default:
			incomplete++
		}
	}
	fmt.Fprintf(&b, "- runs: %d complete, %d failed, %d incomplete (of %d)\n", complete, failed, incomplete, len(runs))
	if hist != nil && len(hist.Invocations) > 0 {
		last := hist.Invocations[len(hist.Invocations)-1]
		fmt.Fprintf(&b, "- wall time: %s for this invocation; %s over all %d invocation(s) on this directory; %d CPU(s), GOMAXPROCS %d, %d run(s) in parallel\n",
			fmtDur(last.WallS), fmtDur(hist.total().Seconds()), len(hist.Invocations), runtime.NumCPU(), runtime.GOMAXPROCS(0), s.jobs())
	}
	fmt.Fprintf(&b, "\nRegret statistics use the runs that reached their last iteration, %s: mean, standard error and median of log10 of the\n", s.itersDescription())
	fmt.Fprintf(&b, "noise-free immediate regret f* − f(x̄) (x̄ = recommendation), floored at %g; the best-evaluated regret is the\n", RegretFloor)
	fmt.Fprintf(&b, "user's rule, the noise-free regret of the trial with the best observed value (comparison.md compares methods by it). Times are medians over all\n")
	fmt.Fprintf(&b, "iterations of all runs (propose excludes the GP fit). Figures: median over runs of log10 of the immediate regret\n")
	fmt.Fprintf(&b, "per iteration (the paper's Figs. 5, 6, 10 plot ln of the mean), shaded between the quartiles;\n")
	fmt.Fprintf(&b, "box plots of log10 of the final immediate regret (Appendix H).\n")
	b.WriteString(s.multiNote())
	for _, g := range groups {
		fmt.Fprintf(&b, "\n## %s, |B| = %d\n\n", g.key.label, g.key.batch)
		fmt.Fprintf(&b, "| acquisition | runs | mean log10 IR | SE | median log10 IR | median log10 best-evaluated regret | median propose s | median fit s | fallback iters | failed |\n")
		fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|\n")
		var notes []string
		for _, a := range g.acqs {
			st := statsOf(a, g.runs[a], s.itersOfLabel(g.key.label))
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s | %s | %d | %d |\n", a, st.complete,
				fmtStat(mean(st.finals), 2), fmtStat(stdErr(st.finals), 2), fmtStat(median(st.finals), 2),
				fmtStat(median(st.bestEvals), 2), fmtSecs(st.medPropose), fmtSecs(st.medFit), st.fallbacks, st.failed)
			if st.floored > 0 {
				notes = append(notes, fmt.Sprintf("%s: %d final regret(s) below %g (floored)", a, st.floored, RegretFloor))
			}
		}
		for _, n := range notes {
			fmt.Fprintf(&b, "\nNote: %s.\n", n)
		}
		base := fmt.Sprintf("%s_q%d.png", slug(g.key.label), g.key.batch)
		fmt.Fprintf(&b, "\n![regret](regret_%s) ![final regret](box_%s)\n", base, base)
	}
	var bad []runResult
	for _, r := range runs {
		if _, ok := finalRegret(r, s.itersOf(r.Spec.Problem)); !ok {
			bad = append(bad, r)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(&b, "\n## Failed and incomplete runs\n\n| problem | acquisition | |B| | seed | status | iterations | error |\n|---|---|---|---|---|---|---|\n")
		for _, r := range bad {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %d | %s |\n", r.Spec.Problem.Label(), r.Spec.Acquisition,
				r.Spec.Batch, r.Spec.Index, r.Status, len(r.Rows), strings.ReplaceAll(oneLine(r.Err), "|", "\\|"))
		}
	}
	return b.String()
}

// halvesDescription counts the suite's problems per half of the held-out
// protocol (Problem.Half); "" when none is in the split.
func (s *Suite) halvesDescription() string {
	n := map[string]int{}
	for _, p := range s.Problems {
		n[p.Half()]++
	}
	if n[HalfTune]+n[HalfHeldOut] == 0 {
		return ""
	}
	d := fmt.Sprintf("halves (held-out protocol, comparison.md reports them apart): %d %s, %d %s problem(s)", n[HalfTune], HalfTune, n[HalfHeldOut], HalfHeldOut)
	if n[""] > 0 {
		d += fmt.Sprintf(", %d outside the split", n[""])
	}
	return d
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// itersDescription is the suite's iterations, or their range followed by
// "(per problem)" when problems have their own.
func (s *Suite) itersDescription() string {
	lo, hi := s.iters(), s.iters()
	for i, p := range s.Problems {
		n := s.itersOf(p)
		if i == 0 || n < lo {
			lo = n
		}
		if i == 0 || n > hi {
			hi = n
		}
	}
	switch {
	case lo == hi && lo == s.iters():
		return strconv.Itoa(lo)
	case lo == hi:
		return strconv.Itoa(lo) + " (per problem)"
	}
	return fmt.Sprintf("%d–%d (per problem)", lo, hi)
}

func (s *Suite) initDescription() string {
	for _, p := range s.Problems {
		if p.Init > 0 {
			return "per problem (Latin hypercube; see comparison.md)"
		}
	}
	n := s.initFor(1)
	if s.InitAtLeastBatch {
		return fmt.Sprintf("max(%d, |B|) points", n)
	}
	if n == 0 {
		return "none"
	}
	return fmt.Sprintf("%d points (Latin hypercube)", n)
}

func (s *Suite) noiseDescription() string {
	d := "1e-4"
	switch {
	case s.NoiseVar < 0:
		d = "0"
	case s.NoiseVar > 0:
		d = fmtFloat(s.NoiseVar)
	}
	var per []string
	for _, p := range s.Problems {
		if v, ok := p.Params[KeyNoiseVar]; ok {
			per = append(per, p.Label()+": "+v)
		}
	}
	if len(per) > 0 {
		d += " (" + strings.Join(per, "; ") + ")"
	}
	if s.FixNoise {
		d += ", GP noise fixed at it"
	} else {
		d += ", GP noise inferred"
	}
	return d
}

func (s *Suite) trustedDescription() string {
	if s.Trusted > 0 {
		return strconv.Itoa(s.Trusted)
	}
	return "max(5, |B|)"
}

func fmtDur(secs float64) string {
	return (time.Duration(secs * float64(time.Second))).Round(time.Second).String()
}

// History records the invocations of Run on one output directory
// (bench.json), so the summary can report the total wall time of a suite
// that was interrupted and resumed.
type History struct {
	Invocations []invocation `json:"invocations"`
}

type invocation struct {
	Started     time.Time `json:"started"`
	WallS       float64   `json:"wall_s"`
	Command     string    `json:"command,omitempty"`
	Finished    int       `json:"runs_finished"`
	Failed      int       `json:"runs_failed"`
	Interrupted bool      `json:"interrupted"`
}

func (h *History) total() time.Duration {
	var s float64
	for _, inv := range h.Invocations {
		s += inv.WallS
	}
	return time.Duration(s * float64(time.Second))
}

// historyLog is the open bench.json of one invocation.
type historyLog struct {
	mu   sync.Mutex
	path string
	h    History
	idx  int // this invocation's entry
}

// openHistory reads dir's bench.json (if any) and appends inv to it.
func openHistory(dir string, inv invocation) (*historyLog, error) {
	l := &historyLog{path: filepath.Join(dir, HistoryFile)}
	b, err := os.ReadFile(l.path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &l.h); err != nil {
			return nil, fmt.Errorf("%s: %w (delete it to start its history afresh)", l.path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	l.h.Invocations = append(l.h.Invocations, inv)
	l.idx = len(l.h.Invocations) - 1
	return l, l.writeLocked()
}

// update changes this invocation's entry and rewrites the file.
func (l *historyLog) update(f func(*invocation)) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.h.Invocations[l.idx])
	return l.writeLocked()
}

func (l *historyLog) snapshot() *History {
	l.mu.Lock()
	defer l.mu.Unlock()
	return &History{Invocations: slices.Clone(l.h.Invocations)}
}

func (l *historyLog) writeLocked() error {
	out, err := json.MarshalIndent(&l.h, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(l.path, func(f *os.File) error { _, err := f.Write(append(out, '\n')); return err }); err != nil {
		return fmt.Errorf("write %s: %w", HistoryFile, err)
	}
	return nil
}

// localDescription is the local model's size for the summary ("" for the
// exact model).
func (s *Suite) localDescription() string {
	if s.Model != host.ModelLocal {
		return ""
	}
	n := s.LocalPoints
	if n == 0 {
		n = host.DefaultLocalPoints
	}
	return fmt.Sprintf(" (%d trials nearest the best one)", n)
}
