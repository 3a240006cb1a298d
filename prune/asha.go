package prune

import (
	"math"
	"slices"
)

// ASHA is asynchronous successive halving (Li et al. 2020, "A System for
// Massively Parallel Hyperparameter Tuning", Algorithm 2) as a stopping rule,
// in the form Optuna's SuccessiveHalvingPruner uses: rung k sits at step
// MinStep·Eta^(Rate+k) (Rate is the paper's minimum early-stopping rate
// s); a trial's value at a rung is the value it reported at the first step
// at or past the rung's step. When a trial reaches a rung it continues only
// if its value there is among the top ⌊n/Eta⌋ of the n values recorded at
// that rung (its own and those of its history's trials, complete or pruned);
// with fewer than Eta values only the best continues. A trial is never
// stopped at or past MaxStep (0: no last step), where it is done anyway.
//
// ASHA never pauses a trial to promote it later (the paper's promotion of
// a paused configuration); a trial not in the top fraction is stopped.
type ASHA struct {
	MinStep int // r ≥ 1
	Eta     int // η ≥ 2
	Rate    int // s ≥ 0
	MaxStep int // R; 0 when unknown
}

// Prune implements Pruner.
func (a ASHA) Prune(trial Curve, history []Curve) bool {
	last, ok := trial.last()
	if !ok {
		return false
	}
	prev := math.MinInt
	if n := len(trial.Points); n > 1 {
		prev = trial.Points[n-2].Step
	}
	for k := 0; ; k++ {
		rung := a.rungStep(k)
		if rung < 0 || rung > last.Step || (a.MaxStep > 0 && rung >= a.MaxStep) {
			return false
		}
		if rung <= prev {
			continue // judged at this rung on an earlier report
		}
		values := []float64{last.Value}
		for _, h := range history {
			if v, ok := valueAt(h, rung); ok {
				values = append(values, v)
			}
		}
		if !promotable(last.Value, values, a.Eta) {
			return true
		}
	}
}

// rungStep is MinStep·Eta^(Rate+k), or -1 when it overflows an int32 step.
func (a ASHA) rungStep(k int) int {
	s := float64(max(a.MinStep, 1)) * math.Pow(float64(max(a.Eta, 2)), float64(a.Rate+k))
	if s > math.MaxInt32 {
		return -1
	}
	return int(s)
}

// valueAt is c's value at the first step at or past step.
func valueAt(c Curve, step int) (float64, bool) {
	i, _ := slices.BinarySearchFunc(c.Points, step, func(p Point, s int) int { return p.Step - s })
	if i == len(c.Points) {
		return 0, false
	}
	return c.Points[i].Value, true
}

// promotable reports whether v is among the top max(1, ⌊len(values)/eta⌋)
// of values (which include v).
func promotable(v float64, values []float64, eta int) bool {
	k := max(1, len(values)/max(eta, 2))
	slices.Sort(values)
	return v >= values[len(values)-k]
}

// Hyperband runs brackets of ASHA with different minimum resources (Li et
// al. 2018, "Hyperband", Algorithm 1, made asynchronous as in Li et al.
// 2020, §3.3 and as Optuna's HyperbandPruner does): with
// s_max = ⌊log_Eta(MaxStep/MinStep)⌋, bracket b = 0…s_max is ASHA with Rate
// b, whose first rung is at MinStep·Eta^b, so bracket 0 stops most
// aggressively and bracket s_max runs every trial to MaxStep. Trial IDs are
// dealt to brackets in proportion to Hyperband's number of configurations
// per bracket, n = ⌈(s_max+1)/(s+1)·Eta^s⌉ with s = s_max − b, by ID
// modulo their sum (so the assignment is a pure function of the ID), and
// a trial competes only with the trials of its own bracket.
type Hyperband struct {
	MinStep int // r ≥ 1
	MaxStep int // R ≥ r
	Eta     int // η ≥ 2
}

// Prune implements Pruner.
func (h Hyperband) Prune(trial Curve, history []Curve) bool {
	weights := h.brackets()
	b := bracketOf(trial.ID, weights)
	var same []Curve
	for _, c := range history {
		if bracketOf(c.ID, weights) == b {
			same = append(same, c)
		}
	}
	return ASHA{MinStep: h.MinStep, Eta: h.Eta, Rate: b, MaxStep: h.MaxStep}.Prune(trial, same)
}

// brackets returns the number of configurations of each bracket b.
func (h Hyperband) brackets() []int {
	eta := float64(max(h.Eta, 2))
	smax := 0
	for r := float64(max(h.MinStep, 1)) * eta; r <= float64(h.MaxStep); r *= eta {
		smax++
	}
	n := make([]int, smax+1)
	for b := range n {
		s := smax - b
		n[b] = int(math.Ceil(float64(smax+1) / float64(s+1) * math.Pow(eta, float64(s))))
	}
	return n
}

// bracketOf deals id to a bracket: id modulo the total weight, walked
// through the cumulative weights.
func bracketOf(id int, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	r := id % total
	if r < 0 {
		r += total
	}
	for b, w := range weights {
		if r < w {
			return b
		}
		r -= w
	}
	return len(weights) - 1
}
