// Package tesbo is a Go SDK and host for batch Bayesian optimization built
// around Trusted-Maximizers Entropy Search (TES, Nguyen et al., UAI 2021).
//
// The work is split into packages, each with one job (the README's "What
// is here" table): gp (Gaussian processes), acq (acquisition interface, inner
// optimizer, baselines), tes (the TES acquisition), host (the BO loop and
// plugin loading), store (study storage), sdk (the plugin SDK) and the
// tesbo-host command. This root package holds no code; it documents the
// module.
package tesbo
