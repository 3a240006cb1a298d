package main

import (
	"cmp"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/safetext"
)

type trialsFlags struct {
	db, study, format string
	best              int
	sort              string
}

func newTrialsCmd() *cobra.Command {
	var f trialsFlags
	cmd := &cobra.Command{
		Use:   "trials --db PATH|URL --study NAME [--format table|json|csv] [--best N] [--sort id|value]",
		Short: "List a study's trials",
		Long: `List every trial of a stored study (SQLite file or postgres:// URL): id,
state (complete, pruned, failed, running, queued), parameters by name, value
(a pruned trial's is the last it reported, at the step shown),
error, the worker that evaluated it (host:pid; empty for a single-process
run), attempts, and timings. --format json prints one JSON object per line,
with the evaluation's metadata (meta: what the objective returned with its
value, and the host's keys such as fidelity_step); --format csv has a
meta.KEY column for each metadata key.
Trials of an objective that reports intermediate values get a step column
(json: step and intermediates, [step, value] pairs). --best N keeps the N
best complete trials, best first; --sort value orders
by value, best first (in the objective's sense: lowest first when it is
minimized), trials without a value last. For an objective of several
outputs the value is the first objective's; feasible trials come first,
and with several objectives by Pareto rank of their observed objectives
(the trials no other feasible one dominates, then those only they
dominate, ...), then by that value. It only reads --db, which may be
on a read-only mount.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTrials(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.db, "db", "", "study database: SQLite path or postgres:// URL")
	fl.StringVar(&f.study, "study", "", "study name")
	fl.StringVar(&f.format, "format", "table", "output format: table, json or csv")
	fl.IntVar(&f.best, "best", 0, "show only the N best complete trials (in the objective's sense: lowest values when it is minimized; several outputs: feasible first, by Pareto rank, then by the first objective)")
	fl.StringVar(&f.sort, "sort", "", "order: id, or value (best first, trials without a value last); default id, value with --best")
	cmd.MarkFlagRequired("db")
	cmd.MarkFlagRequired("study")
	return cmd
}

// trialRow is one trial as 'trials' prints it.
type trialRow struct {
	ID     int                `json:"id"`
	State  string             `json:"state"`
	Params map[string]float64 `json:"params"`
	// Choices name the Categorical parameters' values (Params holds the
	// choices' indices).
	Choices map[string]string `json:"choices,omitempty"`
	Value   *float64          `json:"value"`
	// Outputs and Feasible are a complete trial's outputs by name and
	// whether its constraints hold, for an objective with several.
	Outputs  map[string]float64 `json:"outputs,omitempty"`
	Feasible *bool              `json:"feasible,omitempty"`
	Error    string             `json:"error"`
	Worker   string             `json:"worker"`
	Attempts int                `json:"attempts"`
	Iter     int                `json:"iter"`
	Started  *time.Time         `json:"started,omitempty"`
	Finished *time.Time         `json:"finished,omitempty"`
	EvalS    float64            `json:"eval_s"`
	// Step is the last step the evaluation reported (sdk.Report; a pruned
	// trial's value is the one it reported there), Intermediates every
	// reported (step, value); both absent for an objective that reports none.
	Step          *int         `json:"step,omitempty"`
	Intermediates [][2]float64 `json:"intermediates,omitempty"`
	// ImportedFrom names the study a warm start imported the trial from
	// (its iter is host.ImportedIteration).
	ImportedFrom string `json:"imported_from,omitempty"`
	// Meta is the trial's metadata: what the objective returned with its
	// value (sdk.Result.Meta, e.g. the CNN plugin's test_accuracy) and
	// the host's own keys (fidelity_step, imported_from, imported_id).
	Meta map[string]string `json:"meta,omitempty"`
}

// trialState names a trial's status as 'trials' shows it (pending is
// "queued": waiting for a worker).
func trialState(s host.Status) string {
	if s == host.Pending {
		return "queued"
	}
	return string(s)
}

func runTrials(cmd *cobra.Command, f *trialsFlags) error {
	if err := checkStudyFlag(f.study); err != nil {
		return err
	}
	switch f.format {
	case "table", "json", "csv":
	default:
		return usagef("bad --format %q: use table, json or csv", f.format)
	}
	switch {
	case f.best < 0 || f.best == 0 && cmd.Flags().Changed("best"):
		return usagef("bad --best %d: want a number of trials ≥ 1", f.best)
	case f.sort != "" && f.sort != "id" && f.sort != "value":
		return usagef("bad --sort %q: use id or value", f.sort)
	}
	ctx := cmd.Context()
	db, err := openDBReadOnly(ctx, f.db, zerolog.Nop())
	if err != nil {
		return err
	}
	defer db.Close()
	_, info, err := host.StoredSettings(ctx, db, f.study)
	if err != nil {
		if errors.Is(err, host.ErrNotFound) {
			return usageError{err}
		}
		return err
	}
	ts, err := db.Trials(ctx, f.study)
	if errors.Is(err, host.ErrNotFound) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	names := make([]string, len(info.Params))
	for i, p := range info.Params {
		names[i] = p.Name
	}
	rows := make([]trialRow, len(ts))
	for i, t := range ts {
		r := trialRow{ID: t.ID, State: trialState(t.Status), Params: map[string]float64{}, Error: t.Error,
			Worker: t.Worker, Attempts: t.Attempts, Iter: t.Iteration, EvalS: t.EvalSeconds, ImportedFrom: t.Meta["imported_from"],
			Meta: t.Meta}
		for j, n := range names {
			if j < len(t.X) && !math.IsNaN(t.X[j]) { // NaN: inactive, left out
				r.Params[n] = t.X[j]
			}
		}
		r.Choices = host.ChoiceNames(info.Params, t.X)
		if t.Status == host.Complete || t.Status == host.Pruned {
			v := t.Value
			r.Value = &v
		}
		if n := len(t.Intermediates); n > 0 {
			step := t.Intermediates[n-1].Step
			r.Step = &step
			for _, p := range t.Intermediates {
				r.Intermediates = append(r.Intermediates, [2]float64{float64(p.Step), p.Value})
			}
		}
		setOutputs(&r, info, t)
		if !t.StartedAt.IsZero() {
			s := t.StartedAt
			r.Started = &s
		}
		if !t.FinishedAt.IsZero() {
			s := t.FinishedAt
			r.Finished = &s
		}
		rows[i] = r
	}
	if f.best > 0 || f.sort == "value" { // else ID order: no ranking to compute
		rows = selectTrials(rows, f.best, f.sort, rankOf(info, rows))
	}
	out := cmd.OutOrStdout()
	switch f.format {
	case "json":
		enc := json.NewEncoder(out)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case "csv":
		return writeTrialsCSV(out, names, outputNames(info), rows)
	}
	return writeTrialsTable(out, names, outputNames(info), rows)
}

// selectTrials applies --best and --sort to rows (in ID order): with best
// > 0 only the best complete trials are kept; order "value" (the default
// with --best) puts the best first (rank) and trials without a value last,
// ties in ID order.
func selectTrials(rows []trialRow, best int, order string, rank trialRank) []trialRow {
	if order == "" && best > 0 {
		order = "value"
	}
	byValue := func(a, b trialRow) int {
		switch {
		case a.Value == nil || b.Value == nil:
			if (a.Value == nil) != (b.Value == nil) {
				if a.Value == nil {
					return 1
				}
				return -1
			}
		case rank.tier[a.ID] != rank.tier[b.ID]:
			return cmp.Compare(rank.tier[a.ID], rank.tier[b.ID])
		case *a.Value != *b.Value:
			better := *a.Value > *b.Value
			if rank.minimize {
				better = *a.Value < *b.Value
			}
			if better {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.ID, b.ID)
	}
	if best > 0 {
		var done []trialRow
		for _, r := range rows {
			if r.Value != nil && r.State == string(host.Complete) {
				done = append(done, r)
			}
		}
		slices.SortStableFunc(done, byValue)
		rows = done[:min(best, len(done))]
		if order == "id" {
			slices.SortStableFunc(rows, func(a, b trialRow) int { return cmp.Compare(a.ID, b.ID) })
		}
		return rows
	}
	if order == "value" {
		rows = slices.Clone(rows)
		slices.SortStableFunc(rows, byValue)
	}
	return rows
}

// trialCells are a row's cells after the parameters.
func trialCells(r trialRow) []string {
	val := ""
	if r.Value != nil {
		val = strconv.FormatFloat(*r.Value, 'g', -1, 64)
	}
	fin := ""
	if r.Finished != nil {
		fin = r.Finished.UTC().Format(time.RFC3339Nano)
	}
	return []string{val, r.Error, r.Worker, strconv.Itoa(r.Attempts), strconv.Itoa(r.Iter),
		strconv.FormatFloat(r.EvalS, 'g', 6, 64), fin}
}

var trialTail = []string{"value", "error", "worker", "attempts", "iter", "eval_s", "finished"}

// writeTrialsCSV writes the trials as CSV. The text cells (parameter and
// choice names, errors, workers) come from plugins and go through
// safetext.CSVCell, so a spreadsheet shows them and runs none as a formula.
func writeTrialsCSV(w io.Writer, names, outputs []string, rows []trialRow) error {
	cw := csv.NewWriter(w)
	head := append(append(append([]string{"id", "state"}, names...), outputHead(outputs)...), trialTail...)
	steps := hasSteps(rows)
	if steps {
		head = append(head, "step")
	}
	keys := metaKeys(rows)
	for _, k := range keys {
		head = append(head, "meta."+k)
	}
	for i := range head {
		head[i] = safetext.CSVCell(head[i])
	}
	cw.Write(head)
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.ID), r.State}
		for _, n := range names {
			if c, ok := r.Choices[n]; ok {
				rec = append(rec, safetext.CSVCell(c))
				continue
			}
			v, ok := r.Params[n]
			if !ok { // inactive
				rec = append(rec, "")
				continue
			}
			rec = append(rec, strconv.FormatFloat(v, 'g', -1, 64))
		}
		rec = append(rec, outputCells(r, outputs, func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) })...)
		tail := trialCells(r)
		tail[1], tail[2] = safetext.CSVCell(tail[1]), safetext.CSVCell(tail[2]) // error, worker
		if steps {
			tail = append(tail, stepCell(r, ""))
		}
		for _, k := range keys {
			tail = append(tail, safetext.CSVCell(r.Meta[k]))
		}
		cw.Write(append(rec, tail...))
	}
	cw.Flush()
	return cw.Error()
}

// metaKeys returns every metadata key of rows, sorted: the CSV's meta.KEY
// columns.
func metaKeys(rows []trialRow) []string {
	set := map[string]bool{}
	for _, r := range rows {
		for k := range r.Meta {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// writeTrialsTable writes the trials as an aligned table for a terminal;
// text from plugins (names, choices, errors) goes through cell, so no
// escape sequence reaches the terminal.
func writeTrialsTable(w io.Writer, names, outputs []string, rows []trialRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := append(append(append([]string{"ID", "STATE"}, names...), outputHead(outputs)...), "VALUE")
	steps := hasSteps(rows)
	if steps {
		head = append(head, "STEP")
	}
	head = append(head, "WORKER", "ATTEMPTS", "ERROR")
	for i, h := range head {
		if i > 0 {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprint(tw, cell(h))
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprintf(tw, "%d\t%s", r.ID, r.State)
		for _, n := range names {
			if c, ok := r.Choices[n]; ok {
				fmt.Fprintf(tw, "\t%s", cell(c))
				continue
			}
			if v, ok := r.Params[n]; ok {
				fmt.Fprintf(tw, "\t%.6g", v)
			} else {
				fmt.Fprint(tw, "\t") // inactive
			}
		}
		for _, c := range outputCells(r, outputs, func(v float64) string { return fmt.Sprintf("%.6g", v) }) {
			fmt.Fprintf(tw, "\t%s", c)
		}
		val := "-"
		if r.Value != nil && !math.IsNaN(*r.Value) {
			val = fmt.Sprintf("%.6g", *r.Value)
		}
		worker := r.Worker
		if worker == "" {
			worker = "-"
		}
		fmt.Fprintf(tw, "\t%s", val)
		if steps {
			fmt.Fprintf(tw, "\t%s", stepCell(r, "-"))
		}
		fmt.Fprintf(tw, "\t%s\t%d\t%s\n", cell(worker), r.Attempts, cell(oneLine(r.Error)))
	}
	return tw.Flush()
}

// hasSteps reports whether any trial reported intermediate values (the
// table and CSV then get a step column).
func hasSteps(rows []trialRow) bool {
	return slices.ContainsFunc(rows, func(r trialRow) bool { return r.Step != nil })
}

// stepCell is a row's last reported step, or none.
func stepCell(r trialRow, none string) string {
	if r.Step == nil {
		return none
	}
	return strconv.Itoa(*r.Step)
}

// cell returns s fit for one cell of a terminal table: control characters
// escaped (safetext.Terminal) and tabs, which would split the cell, shown
// as spaces.
func cell(s string) string {
	return strings.ReplaceAll(safetext.Terminal(s), "\t", " ")
}
