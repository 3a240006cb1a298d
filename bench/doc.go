// Package bench runs benchmark suites of BO studies and writes their results:
// every (problem × acquisition × batch size × seed) combination of a Suite is
// run through the same host loop users run (host.NewStudy / Study.Run,
// in-process), stored in one SQLite study database under the output
// directory, and summarised as runs.csv, summary.md and PNG figures in the
// style of the TES paper's §5 and Appendix H (the median log10 immediate
// regret per iteration with its quartiles, box plots of the final regret). It also computes the paper's
// Appendix G diagnostic, the maximized TES_ep value against the batch size
// (BatchCurve).
//
// It is a package of its own, rather than part of host or of the command,
// because its one job — scheduling many studies across cores, resuming a
// killed suite and aggregating the studies' records — is neither the BO loop
// (host) nor command-line handling (cmd/tesbo-host), and embedders and tests
// drive it directly.
//
// # Problems and parameters
//
// A problem is named as the objective is (synthetic/branin, or any objective
// an Opener can open), optionally followed by run parameters separated by
// colons:
//
//	synthetic/gpsample:sample_seed=3
//	synthetic/ackley:dim=5
//	synthetic/log10p:data=/path/to/brooms-barn:noise_var=2.511e-2
//
// Suite.Params (the command's --param key=value) apply to every problem whose
// objective accepts the key (synthetic objectives list their keys; an
// objective that does not gets every key). A parameter that no problem
// accepts is an error. The key noise_var is special: it sets the run's
// observation-noise variance (host.Options.NoiseVar) for that problem,
// overriding Suite.NoiseVar, instead of being passed as a parameter. Values
// can hold neither ':' nor ','; pass such values with Suite.Params. A
// problem's label in the outputs is its name plus its own parameters (keys
// sorted), without the suite-wide ones.
//
// # Seeds and resumption
//
// Run i (0-based) of a (problem, batch size) pair gets the study seed
// Seed(label, batch, i): a hash, so the same suite always runs the same
// studies. By default the seed does not depend on the acquisition, so all
// acquisitions of one (problem, batch, i) share their initial design and
// observation noise (common random numbers, which makes the comparison between
// acquisitions less noisy); Suite.SeedByAcq mixes the acquisition in as well.
//
// Each run is the study named by runSpec.StudyName in <out>/studies.db. A
// suite started again with the same output directory skips the runs that are
// finished, resumes the partial ones (host.OpenStudy: completed evaluations are
// kept, in-flight ones re-run) and starts the rest; a stored study whose
// settings differ from the suite's (noise, initial design, kernel, ...) fails
// with an error rather than mixing two configurations.
//
// # The user suite
//
// UserProblems is the user suite (package problems/usersuite), each problem
// with its own budget (Problem.Init and Problem.Iters, which replace the
// suite's initial design and iterations for that problem). Every run also
// records the user's rule, the noise-free regret of its best evaluated
// trial (Row.BestEvalRegret), and comparison.md compares the methods by it:
// medians with bootstrap standard errors, ratios to the best, wins, ties
// and losses, medians normalized by f* − the median of uniform random
// points, the default acquisition's targets and, for user-suite problems,
// what each problem is, its f* and optimizer.
package bench
