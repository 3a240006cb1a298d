// Package problems is the home of tesbo's benchmark problems, one package
// per job below it:
//
//	problems/testfunc    the benchmark functions as plain numerical code
//	                     (classics, BoTorch's, BBOB, the TES paper's GP
//	                     sample and log10P), depending only on gonum
//	problems/synthetic   testfunc's functions as sdk.Objectives with
//	                     seeded observation noise: "synthetic/<name>"
//	problems/usersuite   the user suite: "user/<name>"
//	problems/mixedsuite  the mixed-space suite: "mixed/<name>"
//	problems/curves      learning curves for early stopping: "curve/<name>"
//
// Both consumers import this package and nothing here imports them back:
// the benchmark runner (package bench, tesbo-host bench) opens the problems
// in process by name (New), and the synthetic plugin (plugins/synthetic)
// serves synthetic/* and user/* to any host (Served). The problem packages
// import only the SDK, gonum and each other (internal/arrows checks it), so
// a problem's name, values and budget are defined once for both.
package problems
