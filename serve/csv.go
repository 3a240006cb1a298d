package serve

import (
	"encoding/csv"
	"net/http"
	"strconv"
	"time"

	"github.com/tesbo/tesbo/internal/safetext"
	"github.com/tesbo/tesbo/store"
)

// writeCSV sends the trials as CSV: one row per trial, the parameters as
// columns named after them (native units), times in RFC 3339, value empty
// unless the trial completed. Text cells (parameter names, errors) go
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
		row = append(row[:0], strconv.Itoa(t.ID), strconv.Itoa(t.Iteration), strconv.Itoa(t.Index),
			string(t.Status), value, safetext.CSVCell(t.Error), strconv.Itoa(t.Attempts),
			ts(t.CreatedAt), ts(t.StartedAt), ts(t.FinishedAt), f(t.EvalSeconds))
		row = append(row, paramCells(sm.params, t.X)...)
		cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		s.log.Debug().Err(err).Msg("write csv")
	}
}
