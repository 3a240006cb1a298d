package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/tesbo/tesbo/plugins/facerec/attack"
	"github.com/tesbo/tesbo/plugins/facerec/synth"
)

// trialLine is the part of a `tesbo-host trials --format json` line that
// fig8 reads.
type trialLine struct {
	ID     int                `json:"id"`
	State  string             `json:"state"`
	Params map[string]float64 `json:"params"`
	Value  *float64           `json:"value"`
	Iter   int                `json:"iter"`
}

// trial is one completed evaluation of a run.
type trial struct {
	ID, Iteration int
	Value         float64   // the recorded distance
	X             []float64 // the edits, in synth.Names order
}

// study is one run's completed trials, lowest evaluated distance first.
type study struct {
	name   string
	trials []trial
}

// loadRuns reads the runs named by the STUDY=FILE arguments (FILE "-":
// stdin) and returns them by acquisition, each acquisition's runs in
// argument order. Runs without a completed trial are left out.
func loadRuns(args []string, stdin io.Reader) (map[string][]study, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no runs given: pass STUDY=FILE arguments, FILE holding `tesbo-host trials --db DB --study STUDY --format json` (- for standard input)")
	}
	by := map[string][]study{}
	usedStdin := false
	for _, arg := range args {
		name, path, ok := strings.Cut(arg, "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("argument %q: want STUDY=FILE, e.g. bench/facerec/qei/q20/s0=qei-s0.jsonl", arg)
		}
		acq, err := benchAcquisition(name)
		if err != nil {
			return nil, err
		}
		r := stdin
		if path == "-" {
			if usedStdin {
				return nil, fmt.Errorf("argument %q: standard input (-) can hold only one study", arg)
			}
			usedStdin = true
		} else {
			f, err := os.Open(path)
			if err != nil {
				return nil, fmt.Errorf("study %s: %w", name, err)
			}
			defer f.Close()
			r = f
		}
		s, err := readStudy(name, r)
		if err != nil {
			return nil, fmt.Errorf("study %s (%s): %w", name, path, err)
		}
		if len(s.trials) > 0 {
			by[acq] = append(by[acq], s)
		}
	}
	if len(by) == 0 {
		return nil, fmt.Errorf("no completed %s evaluations in the given studies", attack.Name)
	}
	return by, nil
}

// benchAcquisition is the acquisition in a bench study's name,
// bench/<problem>/<acquisition>/q<batch>/s<seed>.
func benchAcquisition(name string) (string, error) {
	parts := strings.Split(name, "/")
	n := len(parts)
	if n < 5 || parts[0] != "bench" || !strings.HasPrefix(parts[n-2], "q") || !strings.HasPrefix(parts[n-1], "s") {
		return "", fmt.Errorf("study %q: not a bench study name (bench/<problem>/<acquisition>/q<batch>/s<seed>), so its acquisition is unknown", name)
	}
	return parts[n-3], nil
}

// readStudy reads one study's trials JSON lines and keeps its completed
// trials, lowest evaluated distance first (ties in id order).
func readStudy(name string, r io.Reader) (study, error) {
	s := study{name: name}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var l trialLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return study{}, fmt.Errorf("line %d: %w (want `tesbo-host trials --format json` output)", line, err)
		}
		if l.State != "complete" || l.Value == nil {
			continue
		}
		x, err := edits(l.Params)
		if err != nil {
			return study{}, fmt.Errorf("line %d (trial %d): %w", line, l.ID, err)
		}
		s.trials = append(s.trials, trial{ID: l.ID, Iteration: l.Iter, Value: *l.Value, X: x})
	}
	if err := sc.Err(); err != nil {
		return study{}, err
	}
	sort.SliceStable(s.trials, func(i, j int) bool { return s.trials[i].Value < s.trials[j].Value })
	return s, nil
}

// edits orders a trial's parameters as synth.Names, the objective's point.
func edits(params map[string]float64) ([]float64, error) {
	if len(params) != len(synth.Names) {
		return nil, fmt.Errorf("%d parameters, want the %s objective's %d (%s): is this a %s study?",
			len(params), attack.Name, len(synth.Names), strings.Join(synth.Names[:], ", "), attack.Name)
	}
	x := make([]float64, len(synth.Names))
	for i, n := range synth.Names {
		v, ok := params[n]
		if !ok {
			return nil, fmt.Errorf("no parameter %q: is this a %s study?", n, attack.Name)
		}
		x[i] = v
	}
	return x, nil
}
