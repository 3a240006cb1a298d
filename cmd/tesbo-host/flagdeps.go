package main

import (
	"slices"

	"github.com/tesbo/tesbo/host"
)

// flagDep is a run flag that only means something with another setting:
// given without it, it would be silently ignored, so run refuses it.
type flagDep struct {
	flag  string
	needs string // what to add, as the message says it
	ok    func(f *runFlags) bool
}

var runFlagDeps = []flagDep{
	{"warm-start-mode", "--warm-start STUDY", func(f *runFlags) bool { return len(f.warmStart) > 0 }},
	{"batch-max", "--batch auto", func(f *runFlags) bool { return f.batchArg == "auto" }},
	{"batch-min-gain", "--batch auto", func(f *runFlags) bool { return f.batchArg == "auto" }},
	{"batch-rel-gain", "--batch auto", func(f *runFlags) bool { return f.batchArg == "auto" }},
	{"local-points", "--model local or auto (the default)", func(f *runFlags) bool { return f.model != host.ModelExact }},
	{"pruner-startup", "--pruner median", pruneRule(host.PrunerMedian)},
	{"pruner-warmup", "--pruner median", pruneRule(host.PrunerMedian)},
	{"pruner-min-trials", "--pruner median", pruneRule(host.PrunerMedian)},
	{"pruner-min-step", "--pruner asha or hyperband", pruneRule(host.PrunerASHA, host.PrunerHyperband)},
	{"pruner-eta", "--pruner asha or hyperband", pruneRule(host.PrunerASHA, host.PrunerHyperband)},
	{"pruner-max-step", "--pruner asha or hyperband", pruneRule(host.PrunerASHA, host.PrunerHyperband)},
}

// pruneRule is a flagDep's test that --pruner is one of rules.
func pruneRule(rules ...string) func(f *runFlags) bool {
	return func(f *runFlags) bool { return slices.Contains(rules, f.prune.rule) }
}

// checkFlagDeps refuses a flag given without the setting it needs
// (runFlagDeps), which would otherwise be ignored without a word.
// changed reports whether a flag was given (pflag.FlagSet.Changed).
func checkFlagDeps(changed func(name string) bool, f *runFlags) error {
	for _, d := range runFlagDeps {
		if changed(d.flag) && !d.ok(f) {
			return usagef("--%s has no effect here: it needs %s", d.flag, d.needs)
		}
	}
	return nil
}
