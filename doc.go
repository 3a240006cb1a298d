// Package tesbo is a Go SDK and host for batch Bayesian optimization built
// around Trusted-Maximizers Entropy Search (TES, Nguyen et al., UAI 2021).
//
// The work is split into packages, each with one job (the README's "What
// is here" table): gp (Gaussian processes), acq (acquisition interface, inner
// optimizer, baselines), tes (the TES acquisition), host (the BO loop and
// plugin loading), store (study storage), sdk (the plugin SDK) and the
// tesbo-host command. This root package holds no code; it documents the
// module.
//
// # Logging
//
// Every public type that logs takes a zerolog.Logger value in a field
// named Logger (host.Options, loader.Options, store.Options, bench.Suite)
// and logs only to it. Its zero value discards: a program that sets no
// logger gets no output, and nothing in the module ever logs through
// zerolog's global logger (package log). Pass zerolog.New(os.Stderr) or
// any configured logger to see the events.
package tesbo
