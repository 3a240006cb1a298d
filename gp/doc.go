// Package gp implements exact Gaussian-process regression for Bayesian
// optimization: stationary ARD kernels, the exact posterior (paper §3,
// Eq. (1)), conditioning on noise-free function values (Appendix C, used by
// TES through Appendix E), analytic gradients with respect to query inputs
// and hyper-parameters, MAP/ML hyper-parameter fitting, joint and
// whole-function posterior samples, and incremental (rank-k) updates.
//
// # Conventions
//
//   - Inputs live in the unit cube [0,1]^d; the caller (the host) maps native
//     units. Nothing breaks outside the cube, but the default bounds and
//     priors of Fit assume it.
//   - Outputs are standardized by the caller (zero prior mean, unit scale).
//   - A point set is a *mat.Dense with one point per ROW (n×d); a single
//     point is a []float64 of length d.
//   - Hyper-parameters are handled in log space: a Kernel's Params() are
//     [log ℓ_1, ..., log ℓ_d, log σ_s²]; Fit optimizes those plus log σ_n².
//   - Variances refer to the latent f; MeanVarY, PredictY and JointY give
//     the noisy y = f + ε (variances plus NoiseVar()).
//   - Everything is float64. Posterior variances are clamped at ≥ 0 (round
//     off makes them slightly negative at training inputs of a nearly
//     noise-free model). Cholesky factorizations use jitter escalation
//     (minJitter…maxJitter × mean diagonal) and fail with
//     errNotPositiveDefinite beyond that; invalid data (NaN/Inf, size
//     mismatches) fails with errBadInput. No public function returns NaN
//     without an error for finite inputs.
//   - Kernels: NewSE and NewMatern52 panic on a length-scale or signal
//     variance that is ≤ 0, NaN or Inf (a programming error; an invalid
//     kernel would evaluate to NaN). Kernel.WithParams takes any log-values
//     (the fit explores them) and can therefore produce an invalid kernel;
//     checkKernel tells, New and Fit return errBadInput for one and
//     CrossCov, crossCovGradX and crossCovParamGrad panic. The Kernel methods themselves (Eval, GradX, ParamGrad,
//     SampleFrequencies) have the precondition checkKernel(k) == nil and
//     do not check it.
//   - Query methods without an error result (MeanVar, Predict, Joint,
//     Conditioned.Predict, the VJPs, Path.Eval) panic, like gonum, on a
//     dimension mismatch (a programming error), and propagate NaN from a
//     NaN query coordinate instead of panicking; data that enters the model
//     (New, Fit, Add, Condition) is validated and rejected with an error.
//   - All types are immutable after construction and safe for concurrent
//     use; Predict and MeanVarGrad reuse pooled scratch buffers and do not
//     allocate.
//
// # Map to the paper (Nguyen et al., UAI 2021)
//
//   - NewSE: the paper's kernel k = σ_s² exp(−½(x−x')ᵀΛ⁻²(x−x')) (§3);
//     NewMatern52 the Matérn-5/2 alternative. CrossCov gives K_XY,
//     crossCovGradX and crossCovParamGrad its derivatives with respect to
//     the query points and the log-hyper-parameters.
//   - New, GP.MeanVar, GP.Predict, GP.Joint: Eq. (1), μ_x and σ_x²
//     (GP.MeanVarY, GP.PredictY, GP.JointY: the same for noisy y).
//   - GP.Condition, Conditioned.Prior, Conditioned.Predict: Appendix C,
//     Eqs. (meanplus)/(varplus); Predict's A, b, S are Appendix E's a, b and
//     σ²_{x|X*} for a batch (S is the full q×q matrix, reading 4 of package tes).
//   - GP.MeanVarGrad, GP.JointVJP, Conditioned.PredictVJP (and PredictGrad,
//     which shares the forward pass): gradients with respect to query inputs
//     for the acquisition optimizers.
//   - Fit, GP.LogMarginalLikelihood, GP.LogMarginalLikelihoodGrad: maximum
//     marginal likelihood (MAP with weak priors by default) by multi-start
//     L-BFGS with the analytic gradient.
//   - GP.SamplePaths: whole-function samples for TES's trusted maximizers
//     (§4, following PES); GP.SampleJoint: joint samples at a finite set.
//   - GP.Add: observations appended by a block Cholesky update.
//
// # Whole-function samples: why pathwise conditioning
//
// SamplePaths draws a prior function from m random Fourier features and
// corrects it with an exact kernel update (Wilson et al. 2020, "Efficiently
// sampling functions from Gaussian process posteriors"):
//
//	f(x) = f_prior(x) + k(x,X)(K_DD+σ_n²I)⁻¹(y − f_prior(X) − ε).
//
// The alternative, Bayesian linear regression on the m features (as in the
// original PES code), approximates prior and posterior alike with m
// features: once n approaches m its predictive variance collapses away from
// the data ("variance starvation", Wang et al. 2018), so samples are
// overconfident exactly where the maximizer is uncertain, and m has to grow
// with n. The pathwise update keeps the data term exact (a path honours the
// observations like the true posterior), uses the features only for the
// prior, costs one O(n²) solve per sample on the already factorized
// K_DD+σ_n²I, and, because every path draws its own frequencies, its mean
// and covariance at any finite set of points equal the exact posterior's (the
// finite feature count only affects higher moments of a single path; a test
// checks this on 2,000 paths).
//
// # Costs
//
// With n observations, d dimensions: New O(n³); MeanVar/MeanVarGrad O(n²)
// (mean only: O(n d)); Predict O(q n²) in blocks of 64 queries, each block
// laid out one query per column so that the forward substitution is one
// matrix-vector product per factor row (gonum's Dgemv); Condition
// O(n² s + s³) by a Schur complement on the existing factor;
// Conditioned.Predict O(q n² + q n s + q s² + q²(n+s));
// one likelihood-and-gradient evaluation of Fit O(n³) (Cholesky plus the
// explicit inverse the gradient needs); Path.Eval O(m d + n d).
//
// Large n. From 1024 observations on, the factorization, the explicit
// inverse and the triangular solves with a batch of rows (Joint,
// JointVJP, Add, Condition, Conditioned.Predict and PredictVJP) use
// tiled kernels that run on GOMAXPROCS goroutines and give bit-for-bit
// the same results for any GOMAXPROCS; below, gonum's routines as before.
// Fit runs its starts on a 512-point subset and polishes on all data
// (largeFitMin, FitSettings.Subset). SamplePaths evaluates each path's
// prior draw at the data on GOMAXPROCS goroutines at any n (same
// arithmetic, same results). For thousands of observations LocalData
// selects a local model's data: the observations in a box around the
// incumbent, mapped onto the unit cube (see local.go for what it gives
// up).
//
// Predict for q = 10,000 queries at n = 200, d = 6 (BenchmarkPredict10k)
// misses its 50 ms target on one core (profile in docs/results/README.md,
// "Measurements behind the code"): three quarters of its time are the
// variances' triangular solve, q n²/2 multiply-adds at the speed of
// gonum's 2-wide SSE2 GEMV kernel, and the kernel's q n exponentials.
// Neither shrinks by reformulation: an exact variance is a quadratic form with a dense n×n
// matrix per query, which costs about n²/2 multiply-adds however it is
// arranged (the triangular solve's count; an explicit inverse needs as
// many and is less accurate), and there is one exponential per
// query–observation pair. Reaching the target would take 4-wide AVX2/FMA
// kernels (assembly: Go has no SIMD intrinsics and gonum's kernels are
// SSE2) or a vectorised exponential, which would also change the kernel
// values' rounding. With GOMAXPROCS > 1 Predict spreads its blocks over
// the cores.
package gp
