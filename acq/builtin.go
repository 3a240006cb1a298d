package acq

import "fmt"

// The baselines registered by this package (the names the CLI's --acq accepts). Single-point
// acquisitions (ei, pi, ucb, mes, pes) build batches greedily with the
// kriging believer (Greedy with LieBeliever: fantasize the posterior mean at
// each chosen point, which shrinks the variance there); for ucb that is
// exactly bucb, so "ucb" with |B| > 1 and "bucb" are the same method (see
// Greedy for how it simplifies GP-BUCB). qei optimizes the batch jointly; qei-cl is Greedy EI with the
// constant lie Options.Lie (default min); lp-ei, ts and random build batches
// themselves.
//
// nehvi and cei need a study with several outputs (MultiProposer; their
// Propose refuses a single-output study): nehvi, the noisy expected
// hypervolume improvement in log form, for several objectives with or
// without constraints (with one objective it is the constrained noisy EI);
// cei, EI times the probability of feasibility, for one objective under
// outcome constraints.
func init() {
	single := func(sc func(Options) Scorer) factory {
		return func(o Options) (Proposer, error) {
			return Greedy{Scorer: sc(o), Lie: LieBeliever, Settings: o.optimizeSettingsOrDefault()}, nil
		}
	}
	ucb := func(o Options) Scorer { return UCB{Beta: o.UCBBeta, Delta: o.UCBDelta} }
	Register("parego", func(o Options) (Proposer, error) { return parego{settings: o.Optimize}, nil })
	Register("ei", single(func(Options) Scorer { return ei{} }))
	Register("pi", single(func(Options) Scorer { return pi{} }))
	Register("ucb", single(ucb))
	// bucb: GP-BUCB (Desautels, Krause & Burdick 2014, JMLR 15) simplified
	// to UCB with believer lies and one β_t for the whole batch, without
	// the paper's β inflation; see Greedy.
	Register("bucb", func(o Options) (Proposer, error) {
		return Greedy{Scorer: ucb(o), Lie: LieBeliever, Settings: o.optimizeSettingsOrDefault(), Async: true}, nil
	})
	Register("mes", single(func(o Options) Scorer {
		return mes{Samples: o.MaxValueSamples, Gumbel: o.MESGumbel, Features: o.PathFeatures, Settings: pathWorkers(o)}
	}))
	Register("pes", single(func(o Options) Scorer {
		return pes{Samples: o.trustedFor(1), Features: o.PathFeatures, Settings: pathWorkers(o)}
	}))
	Register("qei", func(o Options) (Proposer, error) {
		return Optimized{Scorer: qei{Samples: o.MCSamples}, Settings: o.optimizeSettingsOrDefault()}, nil
	})
	Register("qei-cl", func(o Options) (Proposer, error) {
		switch o.Lie {
		case lieMin, lieMean, LieMax:
		default:
			return nil, fmt.Errorf("constant liar needs lie min, mean or max, got %v", o.Lie)
		}
		return Greedy{Scorer: ei{}, Lie: o.Lie, Settings: o.optimizeSettingsOrDefault(), Async: true}, nil
	})
	Register("lp-ei", func(o Options) (Proposer, error) {
		return localPenalization{Settings: o.optimizeSettingsOrDefault()}, nil
	})
	Register("ts", func(o Options) (Proposer, error) {
		return thompson{Features: o.PathFeatures, Settings: pathWorkers(o)}, nil
	})
	Register("random", func(Options) (Proposer, error) { return random{}, nil })
	Register("nehvi", func(o Options) (Proposer, error) {
		return nehvi{Samples: o.MCSamples, Settings: o.optimizeSettingsOrDefault()}, nil
	})
	Register("cei", func(o Options) (Proposer, error) {
		return cei{Settings: o.optimizeSettingsOrDefault()}, nil
	})
}

// pathWorkers returns the settings the registered path-based acquisitions
// (mes, pes, ts) pass to pathMaxima: its path defaults (128 raw samples,
// 10 restarts, 50 iterations), run on the caller's Options.Optimize.Workers
// goroutines so a one-worker setting holds for the path searches too. The
// other fields of Options.Optimize configure the acquisition's own
// maximization only.
func pathWorkers(o Options) OptimizeSettings {
	return OptimizeSettings{Workers: o.Optimize.Workers}
}
