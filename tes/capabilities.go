package tes

import "github.com/tesbo/tesbo/acq"

// MaxBatch bounds the batch of the TES acquisitions (tes, tes-ep, tes-sp;
// the host documents it as host.MaxBatchTES): α(B) integrates over the
// batch's q-dimensional outcome for every trusted maximizer, with q×q
// covariances, so its cost grows quickly with q (see docs/results for the
// measurements).
const MaxBatch = 100

// batchLimit is what every TES acquisition declares as acq.BatchLimiter.
var batchLimit = acq.Limit{
	Max:  MaxBatch,
	Name: "MaxBatchTES",
	Why:  "TES integrates over the batch's q-dimensional outcome for every trusted maximizer",
}

// Capabilities declared to the host (see package acq's capabilities):
// TES and Deliver limit their batch (acq.BatchLimiter), hold the pending
// points fixed in the batch, α(B | P) = α(P ∪ B) − α(P) (acq.PendingAware),
// size their batches (acq.Sizer, sized.go) and carry their trusted
// maximizers (acq.MaximizerCarrier, carry.go and stored.go).
var (
	_ acq.BatchLimiter     = (*proposer)(nil)
	_ acq.PendingAware     = (*proposer)(nil)
	_ acq.Sizer            = (*proposer)(nil)
	_ acq.MaximizerCarrier = (*proposer)(nil)
	_ acq.BatchLimiter     = (*Deliver)(nil)
	_ acq.PendingAware     = (*Deliver)(nil)
	_ acq.Sizer            = (*Deliver)(nil)
	_ acq.MaximizerCarrier = (*Deliver)(nil)
	_ acq.PathSampler      = (*proposer)(nil)
	_ acq.PathSampler      = (*Deliver)(nil)
)

// PathSamples implements acq.PathSampler: one path per trusted maximizer
// (Settings.Trusted, or max(5, q)).
func (p *proposer) PathSamples(q int) (paths, features int) {
	s := p.Scorer.Settings
	paths = s.Trusted
	if paths <= 0 {
		paths = max(5, q)
	}
	return paths, s.Search.Features
}

// PathSamples implements acq.PathSampler (as the proposer it delivers).
func (p *Deliver) PathSamples(q int) (paths, features int) { return p.TES.PathSamples(q) }

// BatchLimit implements acq.BatchLimiter: at most MaxBatch points.
func (p *proposer) BatchLimit() acq.Limit { return batchLimit }

// BatchLimit implements acq.BatchLimiter: at most MaxBatch points.
func (p *Deliver) BatchLimit() acq.Limit { return batchLimit }

// HandlesPending implements acq.PendingAware: pending points are held
// fixed in the batch, so new points are chosen for the information they
// add to what the running evaluations will bring.
func (p *proposer) HandlesPending() bool { return true }

// HandlesPending implements acq.PendingAware (as Proposer).
func (p *Deliver) HandlesPending() bool { return true }
