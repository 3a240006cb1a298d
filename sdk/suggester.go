package sdk

import "context"

// SuggestRequest is what a Suggester sees at one iteration, the way a Katib
// suggestion service sees its experiment and trials: the objective's space
// and direction, the completed evaluations, the points still being
// evaluated, and how many new points to propose.
//
// Everything is in native units: History[i].X lies in Objective.Params'
// bounds and History[i].Value is the value the objective returned (the
// suggester must look at Objective.Minimize to know which way is better).
type SuggestRequest struct {
	Objective Info
	History   []Observation
	Pending   [][]float64 // proposed earlier but not yet evaluated; may be empty
	Count     int         // number of points to propose (the batch size q)
	Iter      int         // 1-based BO iteration
	Seed      uint64      // this iteration's seed, derived from the study seed
}

// Suggester proposes a whole batch from the observation history, for
// acquisition variants that build batches themselves rather than score
// them. Suggest returns exactly req.Count points, each with one coordinate
// per parameter inside its bounds (the host rejects anything else).
type Suggester interface {
	Suggest(ctx context.Context, req SuggestRequest) ([][]float64, error)
}

// Acquisition is an acquisition function the host maximizes over batches:
// Score returns α(batch) for a batch of points in [0,1]^d (one point per
// row) given the current posterior. Higher is better. Acquisition scripts
// define the same function as a top-level func Score(p sdk.Posterior,
// batch [][]float64) float64.
type Acquisition interface {
	Score(ctx context.Context, p Posterior, batch [][]float64) (float64, error)
}
