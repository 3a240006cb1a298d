package prune

import (
	"math"
	"slices"
)

// Median is the median stopping rule (Golovin et al. 2017, "Google Vizier",
// §3.2.2), in the form Optuna's MedianPruner uses: a trial that has reported
// step s is stopped when the best value it has reported so far is strictly
// worse than the median of the values the complete trials of its history
// reported at that same step s. It never stops a trial
//
//   - before StartupTrials complete trials exist (and never with none),
//   - at a step below WarmupSteps,
//   - when fewer than max(1, MinTrials) complete trials reported step s.
//
// Pruned trials of the history do not count: their curves stop where they
// fell behind, and counting them would lower the median.
type Median struct {
	StartupTrials int
	WarmupSteps   int
	MinTrials     int
}

// Prune implements Pruner.
func (m Median) Prune(trial Curve, history []Curve) bool {
	last, ok := trial.last()
	if !ok || last.Step < m.WarmupSteps {
		return false
	}
	var atStep []float64
	complete := 0
	for _, h := range history {
		if !h.Complete {
			continue
		}
		complete++
		if i := slices.IndexFunc(h.Points, func(p Point) bool { return p.Step == last.Step }); i >= 0 {
			atStep = append(atStep, h.Points[i].Value)
		}
	}
	if complete == 0 || complete < m.StartupTrials || len(atStep) < max(1, m.MinTrials) {
		return false
	}
	best := math.Inf(-1)
	for _, p := range trial.Points {
		best = max(best, p.Value)
	}
	return best < median(atStep)
}

// median is the middle value of v (the mean of the two middle ones for
// even len(v)); v is reordered.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
