package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/internal/safetext"
	"github.com/tesbo/tesbo/sdk"
)

// output renders a run: --json records on stdout, or a progress bar on a
// terminal, plus a log line per iteration (debug under the bar, info
// otherwise).
type output struct {
	mu    sync.Mutex
	json  *bufio.Writer
	bar   *progressbar.ProgressBar
	log   zerolog.Logger
	best  *float64
	evals int
}

func newOutput(study *host.Study, jsonOut bool, log zerolog.Logger) *output {
	o := &output{log: log}
	if jsonOut {
		o.json = bufio.NewWriter(os.Stdout)
		return o
	}
	if !term.IsTerminal(int(os.Stderr.Fd())) {
		return o
	}
	s := study.Settings()
	init := s.Init
	if s.NoInit {
		init = 0
	}
	total := init + s.Iters*s.Batch
	if s.AutoBatch {
		total = -1 // batch sizes are chosen as the study runs: a counter
	}
	done := 0
	for _, t := range study.Trials() {
		if t.Status == host.Complete || t.Status == host.Failed {
			done++
		}
	}
	o.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetDescription("evaluating"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	o.bar.Set(done)
	return o
}

func (o *output) onTrial(t host.Trial) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bar != nil {
		o.bar.Add(1)
	}
}

func (o *output) onIteration(r host.Record) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.best, o.evals = r.BestValue, r.Evals
	if o.json != nil {
		b, err := json.Marshal(r)
		if err != nil {
			o.log.Error().Err(err).Msg("encode record")
			return
		}
		o.json.Write(b)
		o.json.WriteByte('\n')
		o.json.Flush()
	}
	if o.bar != nil {
		o.bar.Describe(barLabel(r))
	}
	// Without a progress bar (stderr is a file or a pipe) the iteration
	// line is the only sign of progress in a long run: log it at info.
	lvl := zerolog.InfoLevel
	if o.bar != nil {
		lvl = zerolog.DebugLevel
	}
	ev := o.log.WithLevel(lvl).Int("iter", r.Iter).Int("evals", r.Evals).Float64("fit_s", r.FitS).Float64("propose_s", r.ProposeS).Float64("eval_s", r.EvalS)
	if r.BestObserved != nil {
		ev = ev.Float64("best_observed", *r.BestObserved)
	}
	if r.BestValue != nil {
		ev = ev.Float64("recommendation", *r.BestValue)
	}
	ev.Msg("iteration")
}

// barLabel describes an iteration on the progress bar. The best observed
// value and the recommendation's are shown apart: the first never gets
// worse, the second moves both ways as the model learns, and one label
// "best" for it read as a regression.
func barLabel(r host.Record) string {
	s := fmt.Sprintf("iter %d  best observed %s  recommendation %s", r.Iter, fmtPtr(r.BestObserved), fmtPtr(r.BestValue))
	if r.Regret != nil {
		s += "  regret " + strconv.FormatFloat(*r.Regret, 'g', 3, 64)
	}
	return s
}

func (o *output) finish() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.bar != nil {
		o.bar.Exit()
		fmt.Fprintln(os.Stderr)
	}
	if o.json != nil {
		o.json.Flush()
	}
}

func fmtPtr(p *float64) string {
	if p == nil {
		return "-"
	}
	return strconv.FormatFloat(*p+0, 'g', 6, 64) // +0 turns −0 into 0
}

// objectiveName is the objective's name as the command line gave it (kept
// in the study's Meta), which the summary shows: the plugin's own
// Info.Name may differ from the name it is loaded by.
func objectiveName(s host.Options, info sdk.Info) string {
	if n := s.Meta[metaObjective]; n != "" {
		return n
	}
	return info.Name
}

// fmtTime formats the run's time and, for a resumed study, the study's own
// over all its runs (its earlier runs count too; a complete study's resume
// had nothing to do, and its few milliseconds can exceed the study's time
// when evaluations are quick, so the two are not compared).
func fmtTime(res *host.Result, resumed bool) string {
	run := res.Elapsed.Round(time.Millisecond)
	if !resumed {
		return run.String()
	}
	return fmt.Sprintf("%s this run; %s fitting, proposing and evaluating over the study's runs", run, res.StudyTime.Round(time.Millisecond))
}

// fmtObserved formats the best observed trial's value ("-" if none).
func fmtObserved(t *host.Trial) string {
	if t == nil {
		return "-"
	}
	return fmtPtr(&t.Value)
}

// ownEvaluations returns the study's complete and pruned evaluations
// without the trials a warm start imported (evaluated by another study),
// and how many those are.
func ownEvaluations(res *host.Result) (complete, pruned, imported int) {
	complete, pruned = res.Evaluations, res.Pruned
	for _, t := range res.Trials {
		if t.Iteration != host.ImportedIteration {
			continue
		}
		imported++
		switch t.Status {
		case host.Complete:
			complete--
		case host.Pruned:
			pruned--
		}
	}
	return complete, pruned, imported
}

// printSummary writes the final table: evaluations, time, the best
// observed value, and the recommendation x̄ with its value and regret (x̄ in
// native units with parameter names).
func printSummary(w io.Writer, study *host.Study, res *host.Result, dbPath string, resumed bool) {
	s := study.Settings()
	info := study.Info()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "study\t%s (in %s)\n", study.Name(), host.Redact(dbPath))
	fmt.Fprintf(tw, "objective\t%s\n", objectiveName(s, info))
	batch := strconv.Itoa(s.Batch)
	if s.AutoBatch {
		batch = fmt.Sprintf("auto (at most %d)", s.Batch)
	}
	fmt.Fprintf(tw, "acquisition\t%s, batch %s, seed %d\n", s.Acquisition, batch, study.Seed())
	complete, pruned, imported := ownEvaluations(res)
	if pruned > 0 {
		fmt.Fprintf(tw, "evaluations\t%d complete, %d pruned, %d failed, %d BO iterations", complete, pruned, res.Failures, res.Iterations)
	} else {
		fmt.Fprintf(tw, "evaluations\t%d complete, %d failed, %d BO iterations", complete, res.Failures, res.Iterations)
	}
	if imported > 0 {
		fmt.Fprintf(tw, "; %d trials imported by the warm start", imported)
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "time\t%s\n", fmtTime(res, resumed))
	if len(info.Outputs) > 0 {
		printMultiSummary(tw, info, res.Multi)
		tw.Flush()
		return
	}
	dir := "max"
	if info.Minimize {
		dir = "min"
	}
	fmt.Fprintf(tw, "best observed\t%s (%s)\n", fmtObserved(res.BestObserved), dir)
	fmt.Fprintf(tw, "recommendation\t%s (value at x̄)\n", fmtPtr(res.BestValue))
	if info.Optimum != nil && res.BestValue != nil {
		fmt.Fprintf(tw, "known optimum\t%s\n", strconv.FormatFloat(*info.Optimum, 'g', 6, 64))
	}
	if res.Regret != nil {
		gap := "f* − f(x̄)"
		if info.Minimize {
			gap = "f(x̄) − f*"
		}
		fmt.Fprintf(tw, "regret\t%s (%s, noise-free when the objective can)\n", strconv.FormatFloat(*res.Regret, 'g', 3, 64), gap)
	}
	if res.Best != nil {
		for i, p := range info.Params {
			label := ""
			if i == 0 {
				label = "recommended x"
			}
			v := strconv.FormatFloat(res.Best.X[i], 'g', 6, 64)
			if p.Kind == sdk.Categorical {
				v = p.Format(res.Best.X[i])
			}
			if math.IsNaN(res.Best.X[i]) {
				v = "(inactive)" // a conditional parameter
			}
			fmt.Fprintf(tw, "%s\t%s = %s\n", label, p.Name, v)
		}
	}
	tw.Flush()
	if res.Failures > 0 {
		var last string
		for _, t := range res.Trials {
			if t.Status == host.Failed {
				last = t.Error
			}
		}
		fmt.Fprintf(w, "last failure: %s\n", safetext.Terminal(strings.SplitN(last, "\n", 2)[0]))
	}
}
