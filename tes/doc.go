// Package tes implements Trusted-Maximizers Entropy Search (TES; Nguyen,
// Low, Jaillet et al., "Trusted-Maximizers Entropy Search for Efficient
// Bayesian Optimization", UAI 2021) for single points and batches: the
// stochastic approximation TES_sp (§4.1) and the EP approximation TES_ep
// (§4.2), registered with package acq as "tes-ep" and "tes-sp"; and the
// host's default acquisition "tes" (Deliver): TES_ep that also spends
// evaluations at the posterior-mean maximizer x̄, so that what the model
// knows about x* ends up in the trials a user keeps, searches its other
// queries in a trust region around the best trial (region.go; with fixed
// parameters, around the best trial moved onto their slice), opens
// with space-filling points until the study has min(d + 1, 4), kept off
// the bounds (design.go), sends a single-point query to the largest
// posterior variance when the posterior is sure of x* (sure.go), and
// whose GP the host fits to warped observations when they have a long
// lower tail (acq.OutputWarper).
//
// TES measures the information a batch B of noisy observations y_B gives
// about the maximizer x* of f over a finite set X* of trusted maximizers
// (maximizers of posterior sample functions): the information gain of
// Eq. (4), rewritten by symmetry as Eq. (5) and for a batch as Eq. (8)
// (batchsoc):
//
//	α(B) = H(y_B | y_D) − Σ_{x*∈X*} p(x* | y_D) H(y_B | y_D, x*)
//	     = Σ_{x*} p(x*|y_D) E_{q(y_B|x*)}[ log q(y_B|x*) − log q(y_B) ],
//
// with q(y_B | x*) approximating p(y_B | y_D, x*) = ∫ p(y_B | f_X*, y_D)
// p(f_X* | y_D, x*) df_X* (Eq. (6)) and q(y_B) = Σ p(x*) q(y_B | x*).
// α is comparable across batch sizes (Appendix G) and bounded by
// 0 ≤ α ≤ H(x*) = −Σ p log p.
//
// Equation numbers are those of the typeset paper: its numbered displays
// counted in order, (1)–(8) in the main text and (9)–(18) continuing in
// the appendices (the source has no \numberwithin or counter reset, and
// an article-style \appendix renumbers sections only). The unnumbered
// α_sp and α_ep displays are cited by the equation they follow.
//
// # Readings of the paper
//
// Where the paper is silent, ambiguous or misprinted, this package settles
// it as follows; comments elsewhere cite these readings by number
// ("reading 4").
//
//  1. Appendix A's matrix J, taken literally (|X*|×|X*| with a unit
//     diagonal), would add the constraint f(x*) ≤ 0 through its x*-th row.
//     Only the |X*|−1 rows e_i − e_x* (i ≠ x*) are used:
//     p(x*|y_D) = P(f(x_i) − f(x*) ≤ 0 for every i ≠ x*).
//  2. In α_sp (the display after Eq. (6)) the factor |F_x*|⁻¹ depends on
//     x*, so it sits inside the sum over x*; with importance sampling the
//     weights of each set are self-normalised.
//  3. The paper does not say which p(x*) weights the mixture: the orthant
//     probabilities of reading 1, normalised to sum to 1; an x* left without
//     samples (TES_sp's grouping) is dropped and p renormalised.
//  4. For a batch, y_B given f_X* and y_D has the full q×q covariance
//     S_{B|X*} + σ_n² I with S_{B|X*} = K_BB − K_Bt K₊⁻¹ K_tB
//     (K₊ = K_tt + σ_n² Ĩ), not only the diagonal Appendix E writes for one
//     point.
//  5. EP's schedule, initialisation, damping and stopping rule are not
//     given: sequential sweeps from flat sites (about 8–14 sweeps for
//     |X*| = 5; damping reaches the same fixed point), and for β below
//     about −5 the inverse Mills ratio φ(β)/Φ(β) comes from a continued
//     fraction, since the direct quotient loses all digits there.
//  6. The source's labels eq:epmean and eq:epcov are swapped (so equations
//     are cited by number); Appendix E's N(f(x); …) means y_x, and §3's
//     "x* = max" means argmax.
//
// # Map to the paper
//
// Query-independent work, done once per BO iteration (Remark 2):
//
//   - trustedMaximizers: X* as maximizers of gp.Path posterior samples (§4,
//     following PES), maximized with acq.Maximize from the best observed
//     inputs, the previous X* and space-filling points; near-duplicates
//     (closer than trustedSettings.DedupDistance length-scales) replaced.
//   - gp.GP.Condition / Conditioned.Prior: p(f_X* | y_D) = N(m̃, K̃)
//     (Eq. (1) at X*; Appendix C) — done in NewModel.
//   - MaximizerProbabilities: p(x*|y_D) = P(f(x_i) − f(x*) ≤ 0 ∀ i ≠ x*),
//     Appendix A with only the |X*|−1 difference rows of J (reading 1),
//     each a Gaussian orthant probability by Genz's randomized QMC with
//     variable reordering (mvnCDF), normalised to sum to 1 (reading 3);
//     each estimate carries a standard error.
//   - maximizerEP: q_ep(f_X* | y_D, x*) = N(μ_ep, Σ_ep) by expectation
//     propagation with one site per constraint c_x'ᵀ f_X* ≥ 0 (Appendix D):
//     Σ_ep is Eq. (11) and μ_ep Eq. (12) — the source labels them
//     eq:epmean and eq:epcov the wrong way round (reading 6), so cite
//     them by number. Cavity, tilted moments μ̂, τ̂ from Eqs. (13)–(18)
//     (truncMoments: the inverse Mills ratio by continued fraction below
//     β = −5, reading 5), damped site updates, rank-one updates of
//     Σ_ep, a tolerance and a sweep cap; a non-positive cavity variance
//     skips the update (logged at warn level by NewModel).
//   - groupedSampleSets / importanceSampleSets: the sets F_x* of TES_sp
//     (§4.1): joint samples grouped by argmax, or importance sampling with a
//     lower-truncated Gaussian for f(x*) and weights 1 − Φ(f⁺) (Appendix
//     B), self-normalised (reading 2).
//   - NewModel / modelAt: all of the above; Model.Func then fixes the
//     base points for batches of q points.
//
// Query-dependent work, per evaluation of α(B) (Func.Eval):
//
//   - gp.Conditioned.Predict: p(f_B | f_X*, y_D) = N(A f_X* + b, S)
//     (Appendix C, Eqs. (9) and (10); Appendix E's a, b, σ²_{x|X*} for a
//     batch with the full S = S_{B|X*}, reading 4).
//   - epMixture.gaussInfo (TES_ep): q_ep(y_B | y_D, x*) =
//     N(A μ_ep + b, S + σ_n² I + A Σ_ep Aᵀ) — Eq. (7) (epapprox) and
//     Appendix E, for a batch — and α_ep (the display after Eq. (7)).
//   - spMixture.info (TES_sp): q_sp(y_B | y_D, x*) = Σ_{F_x*} w̄ N(A f + b,
//     S + σ_n² I) and α_sp (the displays after Eq. (6) in §4.1 defining
//     q_sp and α_sp, with |F_x*|⁻¹ inside the sum, reading 2).
//   - gp.Conditioned.predictVJP: ∂α/∂B from ∂α/∂A and ∂α/∂S (analytic,
//     reverse mode; checked against finite differences in the tests).
//
// The expectation over y_B uses Gauss–Hermite quadrature for one point (and
// for two points in TES_ep) and fixed antithetic Monte-Carlo base points
// otherwise (y = m + L z, the reparameterization of §4.1), so the inner
// optimizer sees a deterministic differentiable function; Func.Estimate
// returns the estimate's standard error and Func.EvalSample a fresh-sample
// estimate (acq.Stochastic, the paper's Adam setting). The log-ratio
// log q(y|x*) − log q(y) is averaged directly — the component entropies
// enter in closed form implicitly, since the χ² term of log q(y|x*)
// cancels — which keeps each term in [0, −log p(x*)].
//
// Batches (§4.3): Func.Starts suggests batches from X* (most probable x*
// first, then draws ∝ p(x*) with small perturbations); Proposer optimizes
// the whole batch jointly with acq.Maximize (optimizeDefaults). Pending
// points P are conditioned on: α(B | P) = α(P ∪ B) − α(P).
// BatchSizeDiagnostic (Model.BatchGains for a given model) reports max α
// for B = 1..Bmax (Appendix G), re-estimated at each maximizer with fresh
// base points so the maximization's selection bias does not inflate it.
//
// # Accuracy (measured in the tests)
//
// On a 2-d problem with 10 observations and |X*| = 5 (exact values by
// brute force, exact_test.go), TES_ep is within ~3% of the exact
// I(x*; y_B) at |B| = 1 (0.321 vs 0.313, 0.600 vs 0.598) and 3–17% below
// it at |B| = 3 (0.87 vs 0.89, 0.89 vs 1.07): EP's Gaussian approximation
// under-counts, more so for batches (an independent check of the paper on
// a problem of the same size found 0.384 vs 0.396 and 0.694 vs 0.802).
// TES_sp converges
// to the exact value from above as its sets grow; with small sets and small
// noise its estimate is strongly biased upwards near X* (each sample's own
// narrow component dominates the mixture), so SPSamples matters.
//
// # Cost
//
// Per evaluation TES_ep costs O(|X*| q² N_base) for the mixture term plus
// gp's O(q n²) prediction, TES_sp O(|F|² n_z) (pruned or factorised where
// the samples separate or overlap). Prepare costs |X*| sample-path
// maximizations, |X*| orthant probabilities in |X*|−1 dimensions and
// |X*| EP runs of O(sweeps·|X*|³). See bench_test.go.
//
// The quadratic term bounds TES_sp. With 5 distinct maximizers and the
// default 128 samples each, |F| = 640: one α evaluation at q = 1 with its
// gradient costs |F|² = 4·10⁵ exponentials and a few |F|×|F| by |F|×8
// matrix products in the factorised form (up to 8|F|² exponentials in the
// windowed one), far more than in d = 2, where maximizers often coincide
// and |F| ≈ 170; a proposal makes ~150 evaluations (BenchmarkPropose;
// timings in docs/results/README.md, "Measurements behind the code").
// SPSamples trades this cost (∝ SPSamples²) against the estimator's bias
// near X*.
//
// # Several outputs
//
// For a study with several outputs (acq.MultiState: objectives to maximize
// and constraint outputs feasible at ≥ 0, one GP per output, independent a
// posteriori), "tes" implements acq.MultiProposer (multi.go,
// multi_trusted.go, multi_info.go). What it learns about, and how:
//
//  1. Trusted solutions. A weight λ is drawn uniformly from the simplex of
//     the objectives. For a function sample f (all outputs), its trusted
//     solution x*_λ(f) maximizes the augmented Chebyshev scalarization s_λ
//     (distance to a utopia point, as in ParEGO) over the points where
//     every constraint holds and, among those, over the ones whose
//     objectives dominate the study's declared reference point, when f
//     has any (outside that box a point adds no hypervolume; a reference
//     point derived from the observations does not restrict them); if no
//     point is feasible, it is the least infeasible one. Every feasible
//     Pareto-optimal point of f maximizes s_λ for some λ (up to the small
//     bias of ParEGO's augmentation term, which
//     rules out points with unbounded trade-offs), so the pair (λ, x*_λ)
//     describes the feasible Pareto set of f; with one objective x*_λ is
//     the feasible maximizer, TES's x* under constraints. T is the finite
//     set of trusted solutions of 16 joint sample paths (gp.Path, one per
//     output) for L weights (4 per objective; 1 for one objective),
//     searched on uniform candidates, the evaluated points and
//     perturbations of the observed feasible Pareto front (at most
//     max(16, 2q) points).
//
//  2. The information. With x* = x*_Λ over T,
//
//     α(B) = I(y_B; x* | Λ, y_D) = E_λ[ H(y_B | y_D) − Σ_t p(x*_λ = t) H(y_B | y_D, x*_λ = t) ].
//
//     H(y_B | y_D) is Gaussian: ½ log det(2πe C_B). Given f_T, y_B is
//     Gaussian with mean A f_T + b and covariance S + Σ_ε (Appendix C's
//     conditioning, per output), and x* is a function of f_T, so by the
//     law of total covariance C_{B|t} = Cov[y_B | x* = t] = S + Σ_ε +
//     A Cov[f_T | x* = t] Aᵀ, with the cross-output blocks of
//     Cov[f_T | x* = t] (the label couples the outputs). A Gaussian has the
//     largest entropy for its covariance, so H(y_B | x* = t) ≤
//     ½ log det(2πe C_{B|t}) and
//
//     α(B) ≥ α_LB(B) = ½ log det C_B − (1/L) Σ_l Σ_t p_lt ½ log det C_{B|lt}.
//
//     The moments come from S = 256 exact joint samples of every output at
//     T, grouped by their trusted solution under each λ_l; with 1/n
//     normalization the pooled covariance is exactly the within-group
//     average plus the between-group covariance, so α_LB ≥ 0 by the
//     concavity of log det. Labels with fewer than 8 samples are pooled
//     into one group (a coarser x*, whose information is smaller, so the
//     bound stays a lower bound up to sampling error).
//
//  3. Batches and pending points. α_LB is a log-determinant of (m·|B|)²
//     matrices, smooth in B, with an analytic gradient (∂ log det C =
//     tr(C⁻¹ ∂C) through A and S by gp.Conditioned.PredictGrad's VJP); the
//     q points are optimized jointly, and pending points P are conditioned
//     on as for one output: α(B | P) = α_LB(P ∪ B) − α_LB(P).
//
// Relatives and where this differs. PESMO (Hernández-Lobato et al. 2016)
// targets the Pareto set with EP on a sampled set, one point at a time;
// MESMO (Belakaria et al. 2019) and PFES (Suzuki et al. 2020) target the
// Pareto front's values through truncated Gaussians over the dominated
// region; JES for several objectives (Tu et al. 2022) targets sampled
// (X*, Y*) pairs with a moment-matched Gaussian lower bound like the one
// here. PESC (Hernández-Lobato et al. 2015) carries PES to constraints with
// EP, and cEI (Gardner et al. 2014) weights EI by the probability of
// feasibility. Ours keeps TES's finite set of trusted solutions: the
// quantity is discrete (which trusted solution wins under a random
// Chebyshev weight, as in the random scalarizations of Paria et al. 2019),
// constraints enter through the label rather than a feasibility factor,
// the conditional moments are estimated by sampling at T instead of by EP
// or truncation at sampled fronts, and the bound is exact in the batch
// (full (m·|B|)² covariances), so batches of 10–40 points are joint.
// Cost: Prepare evaluates 16 paths per output on about a thousand
// candidates (fewer beyond 4 outputs) and factors |T|×|T| covariances; an
// evaluation of α_LB costs O(m²|B||T|² + (m|B|)³) per group, with the
// groups' covariances of f_T computed once in Prepare.
//
// Delivering (multi_deliver.go). The bound is about information, while the
// user keeps the evaluated Pareto set; as Deliver does with x̄ for one
// output, two evaluations in three go to the points whose posterior means,
// feasible by the constraints' means, most improve the hypervolume of the
// evaluated points' posterior-mean front (with one objective under
// constraints, the points maximizing EI × the probability of feasibility,
// as cEI does, in its noisy form (Letham et al. 2019; package acq's cei):
// the means alone keep such a study on the first feasible island it
// finds): at q = 1 every iteration but each third, in a batch
// the first ⌈2q/3⌉ slots but at most q − 1 (chosen greedily), the rest
// maximizing α_LB with them pending. The single-output trust region and
// opening design have no several-output counterpart; the host's initial
// design opens the study.
//
// # Multi-fidelity
//
// For a multi-fidelity study (acq.FidelityProposer; the host's
// MultiFidelity: the fidelity of an evaluation is the step it runs to,
// t = step/MaxStep ∈ (0, 1], and it costs c(t) = c0 + t full evaluations)
// Deliver.ProposeFidelity (fidelity.go) is MF-TES. Its derivation:
//
//  1. Model. One GP f(x, t) over [0,1]^d × (0,1], t the last input, with
//     the study's ARD kernel over the d+1 inputs: t has its own
//     length-scale, fitted with the others. For the squared exponential
//     this is exactly the product kernel k_x(x, x')·k_t(t, t') of MF-MES
//     and BOCA; for the default Matérn-5/2 it is not a product, but it is
//     the same stationary kernel family on (x, t), which keeps one fit and
//     one path sampler. The observations are every reported intermediate
//     value of every finished trial at its t (the host thins each trial to
//     at most 6 geometric steps).
//  2. Target. The maximizer at full fidelity: X* are the maximizers over x
//     of posterior sample paths with t pinned at 1 (acq.State.Pinned, as
//     for fixed parameters), and x* is the x*_k whose f(x*_k, 1) is
//     largest, p(x*|y_D) from the orthant probabilities of f_X* =
//     (f(x*_k, 1))_k.
//  3. Information. For a query (x, t), y = f(x, t) + ε, Eq. (5) reads
//     α(x, t) = H(y | y_D) − Σ_{x*} p(x*|y_D) H(y | y_D, x*) with
//     p(y | y_D, x*) = ∫ p(y | f_X*, y_D) p(f_X* | y_D, x*) df_X* — Eq. (6)
//     unchanged: p(y | f_X*, y_D) is Appendix C's Gaussian conditional,
//     now of f(x, t) on f at (x*_k, 1) in the joint posterior over (x, t),
//     and EP's q(f_X* | y_D, x*) does not depend on the query. So TES_ep's
//     α (Eq. (7)) applies as it is to the point (x, t): the fidelity enters
//     only through the variance at (x, t) and the cross-covariances
//     k((x, t), (x*_k, 1)). If k does not depend on t (an infinite
//     length-scale for t), f(x, t) = f(x, 1) and α(x, t) is single-fidelity
//     TES's α(x) at every t; the tests check this identity.
//  4. Choice. The query maximizes α(x, t)/c(t), information per unit
//     cost (the gradient of the quotient is analytic), over x and t, and
//     t is rounded up to the next step. The optimizer starts from TES's
//     X*-based starts at t ∈ {1, 0.5, 0.25, 0.1}. α counts one
//     observation at t, while the evaluation also reports the values
//     before t, which the model then sees: α under-counts their (largely
//     redundant) information, so the choice is conservative toward high t.
//  5. Delivery and batches. As Deliver does, every ExploitEvery-th
//     single-point iteration (one slot of a batch) evaluates x̄ =
//     argmax_x μ(x, 1) at full fidelity when its mean beats every
//     evaluated point's at t = 1: the user keeps the best complete trial.
//     When it does not, that iteration's query (that slot) maximizes α at
//     t = 1: otherwise a run whose mean peaks at an evaluated point spent
//     every iteration on the cheapest step, where α/c(t) wins at any α.
//     A batch is greedy: point j maximizes α(P ∪ {b}) − α(P) divided by
//     c(t_b), P the trials in flight, x̄ and points 1..j−1; α(P) is
//     estimated on the first |P| rows of α(P ∪ {b})'s own Monte-Carlo
//     base points, which draw the same y_P (the Cholesky factor is lower
//     triangular), so that α(P)'s error cancels in the difference instead
//     of being divided by c(t_b) (Func.shareBasePoints). The queries
//     are searched in Deliver's trust region around the point with the
//     largest mean at t = 1, over x only (every fidelity stays open):
//     searched over the whole cube, α/c(t) on AugmentedBranin went to the
//     corners at the lowest step, where the posterior variance is largest
//     and a cheap observation still correlates with f_X* a little,
//     evaluation after evaluation. The opening design is not used (the
//     host's initial design runs at full fidelity).
//
// Relatives and where this differs. MF-MES (Takeno et al., "Multi-fidelity
// Bayesian optimization with max-value entropy search and its
// parallelization", ICML 2020) divides the information about the maximum
// value f* at the highest fidelity by the cost, with f* sampled and the
// entropy of a truncated Gaussian; ours targets which trusted maximizer
// wins (TES's discrete x*) with TES's EP, divides by cost the same way,
// and handles a continuous fidelity as an input rather than a few
// discrete fidelities of a multi-output kernel. MF-KG and taKG (Wu,
// Toscano-Palmerin, Frazier and Wilson, "Practical multi-fidelity
// Bayesian optimization for hyperparameter tuning", UAI 2019) value an
// evaluation by the expected gain in the maximum of the full-fidelity
// posterior mean per unit cost, and taKG counts the whole trace of
// values up to the stopping step; ours is an entropy criterion and counts
// one value (item 4), though the model sees the trace. BOCA (Kandasamy et
// al., "Multi-fidelity Bayesian optimisation with continuous
// approximations", ICML 2017) chooses x by a UCB at full fidelity and then
// the cheapest fidelity whose posterior standard deviation exceeds a
// threshold; ours chooses x and t jointly by one criterion.
package tes
