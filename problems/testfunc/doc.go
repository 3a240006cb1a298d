// Package testfunc holds tesbo's benchmark objective functions: the classic
// synthetic test functions, the rest of BoTorch's synthetic test functions,
// the 24 noiseless BBOB functions with COCO-style random instances (BBOB),
// and the two objectives of the TES paper's §5.1 (the GP sampled function
// and the log10P field of Broom's Barn farm).
//
// Every Function is in maximization form (minimization classics are
// negated), lives on a box in its native units, and knows its global maximum
// f* and maximizers, so the immediate regret f* − f(x̄) of a recommendation
// can be computed exactly. Smooth functions provide analytic gradients (the
// BBOB functions and Bukin have none).
// EvalUnit and GradUnit take unit-cube inputs, the coordinates a BO host
// works in.
//
// Observations for benchmarks add deterministic Gaussian noise (Observe): the
// standard normal deviate is drawn from a generator seeded by a hash of the
// seed and the float64 bits of x, so a run is reproducible however its
// evaluations are scheduled.
//
// This package depends only on the standard library and gonum; the
// sdk.Objective adapter is package problems/synthetic, and the plugin that
// serves it is plugins/synthetic.
package testfunc
