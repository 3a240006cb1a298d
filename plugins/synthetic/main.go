// Command synthetic is tesbo's benchmark-function plugin: it serves every
// function of package problems/testfunc as the objective "synthetic/<name>" (branin,
// hartmann3, hartmann4, hartmann6, gpsample, log10p, ackley, levy,
// rosenbrock, sixhumpcamel, michalewicz, styblinskitang; BoTorch's shekel,
// cosine8, griewank, rastrigin, dixonprice, powell, beale, bukin, dropwave,
// eggholder, holdertable, threehumpcamel; the 24 noiseless BBOB functions
// bbob-f1 … bbob-f24 on [−5, 5]^d), all in maximization form with their
// known optimum f*, the user suite's problems (package problems/usersuite)
// as "user/<name>", the learning-curve suite (package problems/curves)
// as "curve/<name>", whose evaluations report their accuracy every epoch
// (sdk.Report) for tesbo-host run --pruner, BoTorch's multi-fidelity
// AugmentedBranin and AugmentedHartmann (package problems/fidelity) as
// "mf/augmented-branin" and "mf/augmented-hartmann", whose fidelity is the
// step (tesbo-host run --multi-fidelity), and the conditional problems
// (package problems/conditional) as "cond/branches" and "cond/branches-flat".
//
// Run parameters (--param key=value), see package problems/synthetic:
//
//	noise_var    observation noise variance; tesbo-host always sends its
//	             --noise-var (default 1e-4, the paper's for every function
//	             but log10p, whose experiments use the data's 2.511e-2:
//	             pass --noise-var 2.511e-2). Only a caller that sends
//	             none gets each function's own default.
//	seed         noise seed (the host sends the study seed)
//	dim          dimension of ackley, levy, rosenbrock, michalewicz,
//	             styblinskitang, griewank, rastrigin, dixonprice, powell
//	             (a multiple of 4) and bbob-f* (default 2; powell 4)
//	instance     BBOB instance of bbob-f* (default 1): a seeded random
//	             optimum, rotations and f-offset, COCO-style but drawn by
//	             tesbo's own generator, so not COCO's numbers
//	sample_seed  which draw gpsample is (default 0)
//	data         log10p's data directory (required): the paper's Broom's Barn survey
//
// The host discovers this directory under ./plugins and builds it on first
// use; started by hand it only prints go-plugin's handshake error.
package main

import (
	"github.com/tesbo/tesbo/problems"
	"github.com/tesbo/tesbo/sdk"
)

func main() { sdk.ServeObjectives(objectives()) }

// objectives are the benchmark functions and the user suite's problems
// (user/<name>, package problems/usersuite) and learning curves
// (curve/<name>, package problems/curves), multi-fidelity functions
// (mf/<name>, package problems/fidelity): problems.Served.
func objectives() map[string]sdk.Objective { return problems.Served() }
