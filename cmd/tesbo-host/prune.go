package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/sdk"
)

// pruneFlags are run's early-stopping flags (host.Pruning).
type pruneFlags struct {
	rule                      string
	startup, warmup, minTrial int
	minStep, eta, maxStep     int
	model                     string
}

func (p *pruneFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&p.rule, "pruner", "", "stop trials early from the intermediate values the objective reports: median, asha or hyperband (default: none)")
	fl.IntVar(&p.startup, "pruner-startup", 5, fmt.Sprintf("median: prune nothing until this many trials completed (at most %d)", host.MaxPrunerStartup))
	fl.IntVar(&p.warmup, "pruner-warmup", 0, fmt.Sprintf("median: prune nothing before this step (at most %d)", sdk.MaxStepLimit))
	fl.IntVar(&p.minTrial, "pruner-min-trials", 0, fmt.Sprintf("median: compare only when at least this many completed trials reported the step (at most %d)", host.MaxPrunerStartup))
	fl.IntVar(&p.minStep, "pruner-min-step", 1, fmt.Sprintf("asha, hyperband: the first rung's step r (1 to %d)", sdk.MaxStepLimit))
	fl.IntVar(&p.eta, "pruner-eta", 3, fmt.Sprintf("asha, hyperband: keep the top 1/eta at each rung; rungs at r·eta^k (2 to %d)", host.MaxPrunerEta))
	fl.StringVar(&p.model, "pruner-model", "", "how the GP sees a stopped trial: curve (a GP over the parameters and the step, proposing at the last step) or last (at its last value) (default: curve, last where curve cannot run: workers, the local model, no max step)")
	fl.IntVar(&p.maxStep, "pruner-max-step", 0, fmt.Sprintf("asha, hyperband: the last step of a full evaluation (default: the objective's declared MaxStep; at most %d)", sdk.MaxStepLimit))
}

// pruning checks the flags and returns the study's setting.
func (p *pruneFlags) pruning() (host.Pruning, error) {
	bad := func(name string, v, lo, hi int) error {
		if v < lo || v > hi {
			return usagef("bad --%s %d: must be in [%d, %d]", name, v, lo, hi)
		}
		return nil
	}
	if p.model != "" && p.model != host.PruneModelLast && p.model != host.PruneModelCurve {
		return host.Pruning{}, usagef("bad --pruner-model %q: use %s or %s", p.model, host.PruneModelCurve, host.PruneModelLast)
	}
	switch p.rule {
	case "":
		if p.model != "" {
			return host.Pruning{}, usagef("--pruner-model %s needs a pruner: add --pruner median|asha|hyperband", p.model)
		}
		return host.Pruning{}, nil
	case host.PrunerMedian, host.PrunerASHA, host.PrunerHyperband:
	default:
		return host.Pruning{}, usagef("bad --pruner %q: use %s, %s or %s", p.rule, host.PrunerMedian, host.PrunerASHA, host.PrunerHyperband)
	}
	for _, err := range []error{
		bad("pruner-startup", p.startup, 0, host.MaxPrunerStartup),
		bad("pruner-warmup", p.warmup, 0, sdk.MaxStepLimit),
		bad("pruner-min-trials", p.minTrial, 0, host.MaxPrunerStartup),
		bad("pruner-min-step", p.minStep, 1, sdk.MaxStepLimit),
		bad("pruner-eta", p.eta, 2, host.MaxPrunerEta),
		bad("pruner-max-step", p.maxStep, 0, sdk.MaxStepLimit),
	} {
		if err != nil {
			return host.Pruning{}, err
		}
	}
	out := host.Pruning{Rule: p.rule, Model: p.model}
	if p.rule == host.PrunerMedian {
		out.StartupTrials, out.WarmupSteps, out.MinTrials = p.startup, p.warmup, p.minTrial
	} else {
		out.MinStep, out.Eta, out.MaxStep = p.minStep, p.eta, p.maxStep
	}
	return out, nil
}
