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
// and then repeats until its budget, Options.Init + Options.Iters ×
// Options.Batch evaluations, is finished:
//
//  1. standardize the completed values (maximizing: a minimizing objective
//     is negated) and fit the GP by MAP, warm-started from the previous
//     iteration's hyper-parameters (package gp);
//  2. ask the acquisition (an acq.Proposer, e.g. "tes-ep") for
//     Options.Batch points, with the trials still in flight as pending
//     points; move any point that coincides with an earlier one;
//  3. evaluate the batch in Options.Parallel slots, each attempt under
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
// # Fixed, imported and conditional parameters
//
// Options.Fixed (and Ask's Fix option) pins parameters in every proposed
// point while the model uses every trial (pin.go); Options.WarmStart
// starts a study from earlier studies' trials, as observations or as a
// prior on where to look (warmstart.go); a parameter with an
// sdk.Condition is active only for some choices of its categorical
// parent, NaN in native units when inactive and at a fixed default in
// the unit cube (conditional.go).
//
// # Multi-fidelity
//
// With Options.MultiFidelity the step an evaluation runs to is its
// fidelity, chosen by the acquisition with the point (acq.FidelityProposer)
// and stored with the trial; the host stops the evaluation there through
// sdk.Report and fits one GP over (x, step/MaxStep) to every reported value
// (fidelity.go).
//
// # One engine
//
// Run, RunWorker and Ask/Tell are views of one study state. Run and
// RunWorker are the same loop (engine.go): evaluation slots take trials
// from the study's queue, evaluate them in the evaluation pool and report
// them; a slot that finds the queue empty asks the proposal policy for
// more. Run is one local worker holding the study's lease, with a
// synchronous policy (a whole batch only when nothing is in flight, so the
// trials follow the seed exactly); RunWorker takes trials from the stored
// queue that workers on any hosts share and proposes asynchronously (the
// running trials pending). With Ask and Tell the caller is the evaluator.
//
// # Several outputs
//
// An objective may declare several outputs (sdk.Info.Outputs: objectives
// to maximize or minimize, and constraints with a bound) and return them
// from one evaluation (sdk.MultiOutput; Study.TellOutputs and
// Study.AttachOutputs with Ask/Tell). Such a study fits one GP per output
// on the shared inputs, as step 1 fits the one (multimodel.go), fills an
// acq.MultiState in the acquisition's frame — minimized outputs negated,
// a constraint "y ≤ b" as the slack b − y, feasible at ≥ 0 — and calls
// the acquisition's ProposeMulti (MultiAcquisitions lists those that have
// one). Its records carry a MultiRecord: the evaluated Pareto set judged by
// the outputs' posterior means, its hypervolume above the given or derived
// reference point, and the feasible fraction (multirecord.go).
//
// # Storage and resume
//
// With Options.DB (a Storage: OpenStorage for a SQLite file or a PostgreSQL
// URL, MemoryStorage for memory; package store behind it) every proposal
// and every outcome is committed before the next proposal uses it.
// OpenStudy reopens a stored study; Run first re-runs the trials that were
// in flight, then continues.
//
// A stored study has one writer at a time: NewStudy and OpenStudy take the
// study's lease (store.LeaseStore.AcquireLease) before reading its trials, a
// heartbeat renews it, and Close releases it. A second Study on the same
// stored study — in another process, or in this one — gets a
// *LeaseHeldError naming the holder's host and PID, having written
// and evaluated nothing. The lease of a holder that died is taken over: at
// once when it ran on this host and its process is gone (kill -9), else
// when its heartbeat is older than the lease's 30 s TTL. Call Close when
// done with a study from NewStudy or OpenStudy (Optimize does).
//
// # Concurrency
//
// Studies share no state: many can run in one process at once (also on one
// Storage), which is what benchmark harnesses do. One Study's Run must not
// be called concurrently with itself; Ask/Tell may be called from several
// goroutines.
//
// # From a command to a stored trial
//
// A front end parses its flags into Options and makes one call: Start (a
// new study), Resume (a stored one) or Join (a stored one, as one of its
// workers). These decide what a command-line user should not have to: the
// defaults (an initial design from what the objective declares,
// sdk.Info.InitialDesign, with InitFromObjective), whether this process
// runs the study alone or as a worker of a study shared on PostgreSQL, and
// whether another process holds the study. tesbo-host run walks:
//
//  1. its flags fill Options in a Launch (cmd/tesbo-host runNew);
//  2. Start normalizes the options (once) and sends the objective its run
//     parameters (Configure, once per plugin process), then reads its Info;
//  3. newStudy resolves the initial design, validates the options (once),
//     maps the space and builds the proposer, all without I/O;
//  4. Launch.OpenDB opens the database, and Study.create stores the study
//     and takes its lease (Start runs the study alone, or hands it to
//     the worker loop, runWorker, on a shared database);
//  5. Study.Run runs the engine as one local worker; when nothing is in
//     flight its policy (localEngine.propose) asks (Study.Ask: fit,
//     propose) and Study.issue stores the batch's trials (store AddBatch:
//     pending);
//  6. the slots take them (localEngine.take), the evaluation pool runs them
//     (timeouts, retries) and Study.finish stores each outcome (store
//     FinishTrial: complete or failed).
//
// Before this walk the command normalized the options four times,
// validated them three times, built a throw-away Study to check them and
// sent Configure twice (three times on PostgreSQL), in about 14 hops.
//
// Plugin discovery and loading live in the subpackage host/loader; the
// adapter AcquisitionProposer turns an acquisition plugin into a Proposer,
// and a batch-proposing plugin is given as Options.Suggester. What an
// acquisition can do it declares itself (package acq's capabilities),
// checked in host/capabilities.go; the methods the host reads off a
// plugin handle are named in host/plugin.go.
package host
