package serve

import (
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/tesbo/tesbo/internal/safetext"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// writeCSV sends the trials as CSV: one row per trial, the parameters as
// columns named after them (native units), times in RFC 3339, value empty
// unless the trial completed or was pruned, the last step it reported
// when the objective reports any (where a pruned one stopped), then, for an objective
// with several outputs, one column per output and whether the trial is
// feasible (every constraint holds by its
// observed value). Text cells (parameter and output names, errors) go
// through safetext.CSVCell: a spreadsheet opening the file shows them and
// runs none as a formula.
func (s *Server) writeCSV(w http.ResponseWriter, sm *summary, trials []store.Trial) {
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	head := []string{"id", "iteration", "index", "status", "value", "error", "attempts",
		"created", "started", "finished", "eval_s"}
	for _, n := range paramNames(sm) {
		head = append(head, safetext.CSVCell(n))
	}
	steps := slices.ContainsFunc(trials, func(t store.Trial) bool { return len(t.Intermediates) > 0 })
	if steps {
		head = append(head, "step")
	}
	for _, o := range sm.outputs {
		head = append(head, safetext.CSVCell(o.Name))
	}
	if len(sm.outputs) > 0 {
		head = append(head, "feasible")
	}
	cw.Write(head)
	ts := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	row := make([]string, 0, len(head)+len(sm.params))
	for _, t := range trials {
		value := ""
		if t.Status == store.Complete || t.Status == store.Pruned {
			value = f(t.Value)
		}
		step := ""
		if n := len(t.Intermediates); n > 0 {
			step = strconv.Itoa(t.Intermediates[n-1].Step)
		}
		row = append(row[:0], strconv.Itoa(t.ID), strconv.Itoa(t.Iteration), strconv.Itoa(t.Index),
			string(t.Status), value, safetext.CSVCell(t.Error), strconv.Itoa(t.Attempts),
			ts(t.CreatedAt), ts(t.StartedAt), ts(t.FinishedAt), f(t.EvalSeconds))
		row = append(row, paramCells(sm.params, t.X)...)
		if steps {
			row = append(row, step)
		}
		row = append(row, outputCells(sm.outputs, t)...)
		cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		s.log.Debug().Err(err).Msg("write csv")
	}
}

// outputCells are a trial's output columns and its feasibility, empty
// unless it completed with every output (none for one value).
func outputCells(outs []sdk.Output, t store.Trial) []string {
	if len(outs) == 0 {
		return nil
	}
	cells := make([]string, len(outs)+1)
	if t.Status != store.Complete || len(t.Outputs) != len(outs) {
		return cells
	}
	for k, v := range t.Outputs {
		cells[k] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	cells[len(outs)] = strconv.FormatBool(sdk.Info{Outputs: outs}.Feasible(t.Outputs))
	return cells
}
