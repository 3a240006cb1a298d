package sdk

// MaxPosteriorPoints is the most points one posterior request of a plugin
// may name: a MeanCov call (its n×n covariance is 32 MB at this bound, and
// the host computes it in its own memory, outside any plugin memory limit)
// and the host's batched mean/variance request. The host refuses a larger
// request; a script's or plugin's Posterior method then panics with the
// host's answer, which the plugin may recover, and otherwise fails the
// Score call that made it.
const MaxPosteriorPoints = 2000

// Posterior is a read-only view of the host's Gaussian-process posterior
// for acquisition functions. Points are in the unit cube [0,1]^d the host
// maps the objective's space to, and outputs are standardized (zero prior
// mean, maximization), the units package gp works in.
//
// Methods do not return errors because scripts call them in arithmetic;
// an implementation that cannot answer (e.g. its host went away) panics,
// and the script runner turns that panic into an error for the call.
type Posterior interface {
	// Dim is d, the number of coordinates of every point.
	Dim() int
	// MeanVar returns the posterior mean and variance of the latent f at x.
	MeanVar(x []float64) (mean, variance float64)
	// MeanCov returns the joint posterior of f at the points: the mean
	// (len n) and covariance (n×n, row-major as [][]float64). The host's
	// view answers at most MaxPosteriorPoints points and panics past them.
	MeanCov(points [][]float64) (mean []float64, cov [][]float64)
	// Observations returns the data the posterior conditions on (X in
	// [0,1]^d, standardized values).
	Observations() []Observation
	// NoiseVar is the observation-noise variance σ_n² in standardized units
	// (y = f(x) + ε, ε ~ N(0, σ_n²)).
	NoiseVar() float64
	// Incumbent is the best (largest) standardized observed value.
	Incumbent() float64
}

// Categorized is implemented by a Posterior whose space has categorical
// coordinates; the host's views (to acquisition plugins and scripts)
// always implement it. A Categorical parameter with n choices is one
// coordinate u ∈ [0,1] whose choice is its bin, c = min(⌊u·n⌋, n−1): the
// posterior depends on u only through c (the kernel compares choices for
// equality), and the host proposes bin centres (c + ½)/n.
type Categorized interface {
	// Categories returns, per coordinate, the number of choices of a
	// Categorical parameter and 0 for any other kind, or nil when no
	// coordinate is categorical. Do not modify it.
	Categories() []int
}

// Categories returns p's choice counts per coordinate (see Categorized):
// nil when p has no categorical coordinate or does not implement
// Categorized.
func Categories(p Posterior) []int {
	if c, ok := p.(Categorized); ok {
		return c.Categories()
	}
	return nil
}
