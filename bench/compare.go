package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/problems/usersuite"
)

// defaultAcquisition is the acquisition comparison.md checks the quality
// targets for (when the suite runs it).
const defaultAcquisition = host.DefaultAcquisition

// cell is one method on one problem under the user's rule: the median final
// best-evaluated regret over runs, with the bootstrap standard error of the
// median.
type cell struct {
	median, se float64
	n          int
}

// compareCells computes the cells of every (group, acquisition).
func compareCells(s *Suite, groups []*group) map[*group]map[string]cell {
	out := map[*group]map[string]cell{}
	for _, g := range groups {
		iters := s.itersOfLabel(g.key.label)
		out[g] = map[string]cell{}
		for _, a := range g.acqs {
			var fs []float64
			for _, r := range g.runs[a] {
				if v, ok := finalBestEval(r, iters); ok {
					fs = append(fs, math.Max(v, 0))
				}
			}
			if len(fs) > 0 {
				out[g][a] = cell{median: median(fs), se: BootstrapMedianSE(fs), n: len(fs)}
			}
		}
	}
	return out
}

// BootstrapMedianSE is the standard error of the median of xs: the
// standard deviation of the median over 2000 bootstrap resamples (fixed
// seed, so reports are reproducible); NaN for fewer than two values.
func BootstrapMedianSE(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	rng := rand.New(rand.NewPCG(1, uint64(len(xs))))
	const reps = 2000
	meds := make([]float64, reps)
	buf := make([]float64, len(xs))
	for i := range meds {
		for j := range buf {
			buf[j] = xs[rng.IntN(len(xs))]
		}
		meds[i] = median(buf)
	}
	return stdErr(meds) * math.Sqrt(reps) // stdErr divides by √n: undo it
}

// outcome compares a against b on one problem: +1 when a's median is lower
// by more than twice the combined standard error, −1 when higher by as much,
// 0 otherwise (a tie).
func outcome(a, b cell) int {
	tol := 2 * math.Hypot(nanZero(a.se), nanZero(b.se))
	switch {
	case a.median < b.median-tol:
		return 1
	case a.median > b.median+tol:
		return -1
	}
	return 0
}

func nanZero(x float64) float64 {
	if math.IsNaN(x) {
		return 0
	}
	return x
}

// comparisonMarkdown renders comparison.md: the methods compared under the
// user's rule (best evaluated trial), per problem and overall.
func comparisonMarkdown(s *Suite, groups []*group) string {
	cells := compareCells(s, groups)
	var b strings.Builder
	fmt.Fprintf(&b, "# Comparison under the user's rule\n\n")
	fmt.Fprintf(&b, "Each method's final regret is the noise-free regret of the trial with the best observed value after %s\n", s.itersDescription())
	fmt.Fprintf(&b, "iterations (what a user of a black box keeps). Per problem: the median over runs, the bootstrap standard error\n")
	fmt.Fprintf(&b, "of the median (2000 resamples), and the ratio to the best method's median (1 = best). A method wins against\n")
	fmt.Fprintf(&b, "another on a problem when its median is lower by more than twice their combined standard error.\n")
	b.WriteString(s.multiNote())
	b.WriteString("\n")
	acqs := s.Acquisitions
	fmt.Fprintf(&b, "| problem | |B| | %s |\n|---|---|%s\n", strings.Join(acqs, " | "), strings.Repeat("---|", len(acqs)))
	for _, g := range groups {
		best := math.Inf(1)
		for _, c := range cells[g] {
			best = math.Min(best, c.median)
		}
		row := []string{g.key.label, fmt.Sprint(g.key.batch)}
		for _, a := range acqs {
			c, ok := cells[g][a]
			if !ok {
				row = append(row, "—")
				continue
			}
			ratio := "1"
			if c.median > best {
				ratio = fmt.Sprintf("%.3g", c.median/best)
				if best == 0 {
					ratio = "∞"
				}
			}
			row = append(row, fmt.Sprintf("%.3g ± %.2g (×%s)", c.median, nanZero(c.se), ratio))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintf(&b, "\n## Wins / ties / losses (row against column)\n\n")
	b.WriteString(winsMarkdown(acqs, groups, cells))
	b.WriteString(normalizedMarkdown(s, groups, cells))
	b.WriteString(userProblemsMarkdown(s))
	b.WriteString(targetsMarkdown(s, groups, cells))
	b.WriteString(halvesMarkdown(s, groups, cells))
	return b.String()
}

// winsMarkdown renders the wins/ties/losses table of every method against
// every other over groups.
func winsMarkdown(acqs []string, groups []*group, cells map[*group]map[string]cell) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| | %s |\n|---|%s\n", strings.Join(acqs, " | "), strings.Repeat("---|", len(acqs)))
	for _, a := range acqs {
		row := []string{a}
		for _, o := range acqs {
			if a == o {
				row = append(row, "")
				continue
			}
			var w, t, l int
			for _, g := range groups {
				ca, okA := cells[g][a]
				co, okO := cells[g][o]
				if !okA || !okO {
					continue
				}
				switch outcome(ca, co) {
				case 1:
					w++
				case -1:
					l++
				default:
					t++
				}
			}
			row = append(row, fmt.Sprintf("%d/%d/%d", w, t, l))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	return b.String()
}

// halvesMarkdown reports the held-out protocol's halves apart (Problem.Half,
// docs/results/broad/SPLIT.md): per half its problems, the wins/ties/losses
// and the default's targets. Empty when no problem is in the split.
func halvesMarkdown(s *Suite, groups []*group, cells map[*group]map[string]cell) string {
	byHalf := map[string][]*group{}
	for _, g := range groups {
		h := s.problemOf(g.key.label).Half()
		byHalf[h] = append(byHalf[h], g)
	}
	if len(byHalf[HalfTune])+len(byHalf[HalfHeldOut]) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## By half (held-out protocol)\n\n")
	fmt.Fprintf(&b, "A lever is tuned on the tune half and kept only if it helps, or does not hurt beyond noise, the held-out half\n")
	fmt.Fprintf(&b, "(the split: docs/results/broad/SPLIT.md).")
	if n := len(byHalf[""]); n > 0 {
		fmt.Fprintf(&b, " %d problem(s) outside the split are counted in neither half.", n)
	}
	b.WriteString("\n")
	for _, h := range Halves {
		gs := byHalf[h]
		labels := make([]string, len(gs))
		for i, g := range gs {
			labels[i] = fmt.Sprintf("%s (|B| = %d)", g.key.label, g.key.batch)
			if len(s.batches()) == 1 {
				labels[i] = g.key.label
			}
		}
		fmt.Fprintf(&b, "\n### %s: %d problem(s)\n\n", h, len(gs))
		if len(gs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s\n\nWins / ties / losses (row against column):\n\n", strings.Join(labels, ", "))
		b.WriteString(winsMarkdown(s.Acquisitions, gs, cells))
		if t := targetsLines(s, gs, cells); t != "" {
			fmt.Fprintf(&b, "\nTargets for the default acquisition (%s) on this half:\n\n%s", defaultAcquisition, t)
		}
	}
	return b.String()
}

// userProblemsMarkdown lists the suite's user-suite problems: what each is,
// its dimension, direction, noise, f* and optimizer (native units).
func userProblemsMarkdown(s *Suite) string {
	var b strings.Builder
	for _, sp := range s.Problems {
		p, err := usersuite.Lookup(sp.Name)
		if err != nil || !strings.HasPrefix(sp.Name, usersuite.Prefix) {
			continue
		}
		if b.Len() == 0 {
			fmt.Fprintf(&b, "\n## The user-suite problems\n\n")
			fmt.Fprintf(&b, "| problem | what | d | goal | noise SD | f* | optimizer |\n|---|---|---|---|---|---|---|\n")
		}
		goal := "max"
		if p.Minimize {
			goal = "min"
		}
		xs := make([]string, len(p.Best))
		for j, v := range p.Best {
			xs[j] = strconv.FormatFloat(v, 'g', 6, 64)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | (%s) |\n", sp.Name, strings.ReplaceAll(p.Doc, "|", "\\|"),
			len(p.Params), goal, strconv.FormatFloat(p.NoiseSD, 'g', 3, 64), strconv.FormatFloat(p.Opt, 'g', 10, 64), strings.Join(xs, ", "))
	}
	return b.String()
}

// randomPoints is the number of uniform points whose median noise-free
// value scales a problem's regrets in normalizedMarkdown.
const randomPoints = 4000

// normalizedMarkdown renders each problem's budget, its scale f* − median f
// of uniform random points (median f − f* when minimizing) and every
// method's median regret divided by it, which makes the problems' regrets
// readable side by side (0 = the optimum, 1 = a typical random point).
func normalizedMarkdown(s *Suite, groups []*group, cells map[*group]map[string]cell) string {
	var b strings.Builder
	acqs := s.Acquisitions
	fmt.Fprintf(&b, "\n## Normalized medians\n\n")
	fmt.Fprintf(&b, "Median regret / (f* − median f of %d uniform random points; median f − f* for minimizing problems), noise-free:\n", randomPoints)
	fmt.Fprintf(&b, "0 is the optimum, 1 a typical random point. Budget: initial design and BO iterations per run.\n\n")
	fmt.Fprintf(&b, "| problem | |B| | init | iters | scale | %s |\n|---|---|---|---|---|%s\n", strings.Join(acqs, " | "), strings.Repeat("---|", len(acqs)))
	for _, g := range groups {
		p := s.problemOf(g.key.label)
		scale := randomScale(context.Background(), s, p)
		row := []string{g.key.label, fmt.Sprint(g.key.batch), fmt.Sprint(s.initOf(p, g.key.batch)), fmt.Sprint(s.itersOf(p)), fmtG3(scale)}
		for _, a := range acqs {
			c, ok := cells[g][a]
			if !ok {
				row = append(row, "—")
				continue
			}
			row = append(row, fmtG3(c.median/scale))
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(row, " | "))
	}
	return b.String()
}

func fmtG3(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "—"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// problemOf returns the suite's problem with that label.
func (s *Suite) problemOf(label string) Problem {
	for _, p := range s.Problems {
		if p.Label() == label {
			return p
		}
	}
	return Problem{Name: label}
}

// randomScale is f* − the median noise-free value of randomPoints uniform
// points of problem p's space (in the host's unit cube: log scale for
// LogFloat, equal shares for integers), or median − f* when minimizing;
// NaN when the objective has no noise-free evaluation or no f*, or is a
// shared plugin instance.
func randomScale(ctx context.Context, s *Suite, p Problem) float64 {
	params := map[string]string{}
	for k, v := range s.Params {
		params[k] = v
	}
	for k, v := range p.Params {
		if k != KeyNoiseVar {
			params[k] = v
		}
	}
	src, err := s.noiseFree(ctx, runSpec{Problem: p, Batch: 1}, params, nil)
	if err != nil || src == nil {
		return math.NaN()
	}
	nf, info := src.nf, src.info
	sp, err := host.NewSpace(info.Params)
	if err != nil {
		return math.NaN()
	}
	rng := rand.New(rand.NewPCG(2, uint64(len(p.Label()))))
	u := make([]float64, sp.Dim())
	var vs []float64
	for range randomPoints {
		for j := range u {
			u[j] = rng.Float64()
		}
		if v, err := nf.EvaluateNoiseFree(ctx, sp.ToNative(u)); err == nil && !math.IsNaN(v) {
			vs = append(vs, v)
		}
	}
	d := *info.Optimum - median(vs)
	if info.Minimize {
		d = -d
	}
	return d
}

// targetsMarkdown checks the default acquisition's quality targets: its
// median ≤ EI's (qEI's for batches) and ≤ 0.2 × random search's on at least
// 80% of the problems. After the second it says whether any measured method
// reaches 0.2 × random's median on the problems the default misses: a target
// missed there is missed by every method in the run, which separates the
// default's shortfall from what the problems and the budget allow.
func targetsMarkdown(s *Suite, groups []*group, cells map[*group]map[string]cell) string {
	if !slices.Contains(s.Acquisitions, defaultAcquisition) {
		return ""
	}
	return fmt.Sprintf("\n## Targets for the default acquisition (%s)\n\n", defaultAcquisition) + targetsLines(s, groups, cells)
}

// targetsLines are targetsMarkdown's lines without its heading ("" when
// the suite does not run the default).
func targetsLines(s *Suite, groups []*group, cells map[*group]map[string]cell) string {
	if !slices.Contains(s.Acquisitions, defaultAcquisition) {
		return ""
	}
	var b strings.Builder
	// The default's targets count the problems where it has finished runs.
	withDefault := slices.DeleteFunc(slices.Clone(groups), func(g *group) bool {
		_, ok := cells[g][defaultAcquisition]
		return !ok
	})
	check := func(name string, ref func(g *group) string, factor float64) {
		ok, n, missed := tally(withDefault, cells, ref, func(g *group, r cell) bool {
			return cells[g][defaultAcquisition].median <= factor*r.median
		})
		if n == 0 {
			return
		}
		pass := "met"
		if float64(ok) < 0.8*float64(n) {
			pass = "NOT met"
		}
		fmt.Fprintf(&b, "- median ≤ %s: %d of %d problems (%.0f%%; target ≥ 80%%: %s)", name, ok, n, 100*float64(ok)/float64(n), pass)
		if len(missed) > 0 {
			fmt.Fprintf(&b, "; missed on %s", strings.Join(missed, ", "))
		}
		b.WriteString("\n")
	}
	check("EI's (qEI's for |B| > 1)", func(g *group) string {
		if g.key.batch > 1 {
			return "qei"
		}
		return "ei"
	}, 1)
	random := func(*group) string { return "random" }
	check("0.2 × random search's", random, 0.2)
	ok, n, none := tally(groups, cells, random, func(g *group, r cell) bool {
		return slices.ContainsFunc(s.Acquisitions, func(a string) bool {
			c, okA := cells[g][a]
			return okA && a != "random" && c.median <= 0.2*r.median
		})
	})
	if n > 0 {
		fmt.Fprintf(&b, "- … by any measured method: %d of %d problems", ok, n)
		if len(none) > 0 {
			fmt.Fprintf(&b, "; by none on %s", strings.Join(none, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// tally counts the problems (groups) that have a cell for the reference
// method ref(g) and, of those, the ones where hit holds; it lists the labels
// of the others.
func tally(groups []*group, cells map[*group]map[string]cell, ref func(g *group) string, hit func(g *group, r cell) bool) (ok, n int, missed []string) {
	for _, g := range groups {
		r, okR := cells[g][ref(g)]
		if !okR {
			continue
		}
		n++
		if hit(g, r) {
			ok++
		} else {
			missed = append(missed, g.key.label)
		}
	}
	return ok, n, missed
}
