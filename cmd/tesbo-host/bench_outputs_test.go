package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// benchRun identifies one run of a bench (a runs.csv row without its
// iteration, or a progress line).
type benchRun struct {
	problem, acq string
	batch, seed  int
}

func (r benchRun) studyName() string {
	return fmt.Sprintf("bench/%s/%s/q%d/s%d", r.problem, r.acq, r.batch, r.seed)
}

// benchRuns lists the runs of problems × acqs × batches × seeds.
func benchRuns(problems, acqs []string, batches []int, seeds int) []benchRun {
	var out []benchRun
	for _, p := range problems {
		for _, a := range acqs {
			for _, q := range batches {
				for s := range seeds {
					out = append(out, benchRun{p, a, q, s})
				}
			}
		}
	}
	return out
}

// progressLine is the part of a "run finished" log line the tests check.
type progressLine struct {
	Level      string   `json:"level"`
	Message    string   `json:"message"`
	Progress   string   `json:"progress"`
	Problem    string   `json:"problem"`
	Acq        string   `json:"acq"`
	Batch      int      `json:"batch"`
	Seed       int      `json:"seed"`
	Status     string   `json:"status"`
	Iters      int      `json:"iters"`
	Error      string   `json:"error"`
	Log10      *float64 `json:"log10_regret"`
	MedPropose *float64 `json:"median_propose_s"`
}

func (p progressLine) run() benchRun { return benchRun{p.Problem, p.Acq, p.Batch, p.Seed} }

// progressLines returns stderr's "run finished" records; every stderr line
// must be a JSON log record (errors excepted, which errorLines returns).
func progressLines(t *testing.T, stderr string) []progressLine {
	t.Helper()
	var out []progressLine
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if !strings.HasPrefix(l, "{") {
			continue
		}
		var p progressLine
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("stderr line is not a JSON record: %q: %v", l, err)
		}
		if p.Message == "run finished" {
			out = append(out, p)
		}
	}
	return out
}

// checkProgress checks one progress line per run, numbered 1/n … n/n, all
// with status and iters as given.
func checkProgress(t *testing.T, stderr string, runs []benchRun, status string, iters int) {
	t.Helper()
	lines := progressLines(t, stderr)
	if len(lines) != len(runs) {
		t.Fatalf("%d progress lines for %d runs:\n%s", len(lines), len(runs), stderr)
	}
	seen := map[benchRun]bool{}
	counters := map[string]bool{}
	for _, p := range lines {
		if seen[p.run()] {
			t.Errorf("two progress lines for %+v", p.run())
		}
		seen[p.run()] = true
		counters[p.Progress] = true
		if p.Level != "info" || p.Status != status || p.Iters != iters || p.Error != "" {
			t.Errorf("progress line %+v: want level info, status %s, %d iterations, no error", p, status, iters)
		}
		if p.Log10 == nil || p.MedPropose == nil || *p.MedPropose < 0 {
			t.Errorf("progress line %+v lacks the final log10 regret or the median propose time", p)
		}
	}
	for _, r := range runs {
		if !seen[r] {
			t.Errorf("no progress line for %+v", r)
		}
	}
	for i := 1; i <= len(runs); i++ {
		if c := fmt.Sprintf("%d/%d", i, len(runs)); !counters[c] {
			t.Errorf("no progress line numbered %s", c)
		}
	}
}

// readRunsCSV parses out/runs.csv with encoding/csv (independently of
// package bench's reader), checks its header and that every (run,
// iteration) appears once, and returns its rows keyed by column name.
func readRunsCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	want := "problem,acquisition,batch,seed,study_seed,iteration,evaluations,regret,log10_regret,best_value,fit_s,propose_s,eval_s,fallback,best_eval_regret,best_true_regret"
	if len(recs) == 0 || strings.Join(recs[0], ",") != want {
		t.Fatalf("%s: header %v, want %s", path, recs, want)
	}
	var rows []map[string]string
	seen := map[string]bool{}
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for j, name := range recs[0] {
			m[name] = rec[j]
		}
		k := strings.Join([]string{m["problem"], m["acquisition"], m["batch"], m["seed"], m["iteration"]}, "|")
		if seen[k] {
			t.Fatalf("%s: duplicate row for run|iteration %s", path, k)
		}
		seen[k] = true
		rows = append(rows, m)
	}
	return rows
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	var v int
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return v
}

func atofT(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}

// summarySection returns the body of summary.md's "## <label>, |B| = q"
// section.
func summarySection(t *testing.T, md, label string, q int) string {
	t.Helper()
	head := fmt.Sprintf("## %s, |B| = %d\n", label, q)
	_, rest, ok := strings.Cut(md, head)
	if !ok {
		t.Fatalf("summary.md has no section %q:\n%s", head, md)
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// tableRows returns a markdown section's table rows (without header and
// separator), split into trimmed cells.
func tableRows(section string) [][]string {
	var out [][]string
	for _, l := range strings.Split(section, "\n") {
		if !strings.HasPrefix(l, "| ") || strings.HasPrefix(l, "| acquisition") {
			continue
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		out = append(out, cells)
	}
	return out
}

// storedSettings reads a study's stored options and objective info from
// the database at target (a file or a PostgreSQL URL).
func storedSettings(t *testing.T, target, study string) (host.Options, sdk.Info) {
	t.Helper()
	db, err := store.Open(target, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o, info, err := host.StoredSettings(context.Background(), hostStorage(db), study)
	if err != nil {
		t.Fatalf("study %s: %v", study, err)
	}
	return o, info
}
