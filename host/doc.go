// Package host runs tesbo's batch Bayesian optimization loop and is the API
// for embedding it in Go programs (the tesbo-host command is built on it).
//
// # The loop
//
// A Study maps the objective's parameters into the unit cube (Space: Float
// linearly, LogFloat in log space, Int and Categorical by equal-width bins
// with the point snapped to its bin centre; a space with Categoricals gets
// the mixed kernel gp.Mixed and the acquisition optimizer's search over
// choices, acq.MaximizeMixed), evaluates an initial Latin hypercube design,
// and then repeats, for Options.Iters iterations:
//
//  1. standardize the completed values (maximizing: a minimizing objective
//     is negated) and fit the GP by MAP, warm-started from the previous
//     iteration's hyper-parameters (package gp);
//  2. ask the acquisition (an acq.Proposer, e.g. "tes-ep") for
//     Options.Batch points, with the trials still in flight as pending
//     points; move any point that coincides with an earlier one;
//  3. evaluate the batch with Options.Parallel workers, each attempt under
//     Options.EvalTimeout, failures retried Options.Retries times with
//     exponential backoff and then recorded (errors and NaN/Inf values are
//     failures and never reach the GP);
//  4. report a Record: the recommendation x̄, the objective's value there
//     and the immediate regret f* − f(x̄) (noise-free via sdk.NoiseFree
//     when the objective declares f*).
//
// # The recommendation
//
// The paper's x̄ (§5) is the maximizer of the posterior mean over the whole
// space, and RecommendRefine computes exactly that for any objective. It is
// usually a point nobody evaluated, so reporting f(x̄) — best_value, and
// the regret — needs one more evaluation there. For a benchmark that
// implements sdk.NoiseFree that evaluation is free and exact, and the
// default (RecommendAuto) uses the paper's x̄. For any other objective it
// would be an extra, noisy, possibly expensive call outside the budget, so
// the default takes instead the evaluated point with the largest posterior
// mean, whose observed value is reported (RecommendEvaluated); with
// RecommendRefine such an objective's best_value is the posterior mean at
// x̄ (unless x̄ was evaluated) and its regret is null. Options.Recommend
// chooses.
//
// When there is no completed evaluation yet, or fitting or the acquisition
// fails, an iteration falls back to space-filling random points (logged);
// an all-failed batch does not end a study.
//
// # Determinism
//
// Every random number comes from a stream derived from (study seed,
// iteration, purpose), the GP data are ordered by trial ID, and the fitted
// hyper-parameters that warm-start the next fit are stored. So the same seed
// gives bitwise the same trials, whatever the evaluation order; driving a
// Study with Ask/Tell gives the same trials as Optimize; and a study resumed
// after a crash gives the same trials as an uninterrupted one.
//
// # Storage and resume
//
// With Options.DB (package store) every proposal and every outcome is
// committed before the next proposal uses it. OpenStudy reopens a stored
// study; Run first re-runs the trials that were in flight, then continues.
//
// A stored study has one writer at a time: NewStudy and OpenStudy take the
// study's lease (store.DB.AcquireLease) before reading its trials, a
// heartbeat renews it, and Close releases it. A second Study on the same
// stored study — in another process, or in this one — gets a
// *store.LeaseHeldError naming the holder's host and PID, having written
// and evaluated nothing. The lease of a holder that died is taken over: at
// once when it ran on this host and its process is gone (kill -9), else
// when its heartbeat is older than the lease's 30 s TTL. Call Close when
// done with a study from NewStudy or OpenStudy (Optimize does).
//
// # Concurrency
//
// Studies share no state: many can run in one process at once (also on one
// store.DB), which is what benchmark harnesses do. One Study's Run must not
// be called concurrently with itself; Ask/Tell may be called from several
// goroutines.
//
// Plugin discovery and loading live in the subpackage host/loader; the
// adapter AcquisitionProposer turns an acquisition plugin into a Proposer,
// and a batch-proposing plugin is given as Options.Suggester. What an
// acquisition can do it declares itself (package acq's capabilities),
// checked in host/capabilities.go; the methods the host reads off a
// plugin handle are named in host/plugin.go.
package host
