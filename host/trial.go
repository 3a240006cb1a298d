package host

import "time"

// Trial is one proposed point and, once finished, its outcome: X in native
// units, U the same point in the unit cube, Status, Value (native units, valid
// when complete), Error (when failed), attempts and timings.
type Trial struct {
	ID        int       // 0-based, unique within the study
	Iteration int       // 0 = initial design, t ≥ 1 = BO iteration t
	Index     int       // position within its iteration's batch
	X         []float64 // native units
	U         []float64 // the same point in the unit cube (what the GP sees)
	Status    Status
	Value     float64 // native units; meaningful when Status is Complete or Pruned
	// Outputs are a complete trial's values of an objective with several
	// declared outputs (sdk.Info.Outputs), in order, native units; Value
	// is then the first objective output's.
	Outputs     []float64
	Error       string // why it failed; empty otherwise
	Attempts    int    // evaluation attempts made (retries + 1)
	CreatedAt   time.Time
	StartedAt   time.Time // zero until started
	FinishedAt  time.Time // zero until finished
	EvalSeconds float64   // wall time of the successful (or last) attempt
	Meta        map[string]string
	// Worker is the host:pid of the worker that took the trial from the
	// queue last; empty for trials a single process ran.
	Worker string
	// Intermediates are the values the evaluation reported (sdk.Report),
	// steps increasing; a Pruned trial's Value is the last of them. An
	// Ask/Tell trial in flight has those its Study.Report calls recorded.
	Intermediates []Intermediate
	// Stopping says that an Ask/Tell trial in flight was told to stop by
	// Study.Report (kept when the study is reopened): tell its last
	// value, which Tell records as pruned. False once the trial is told.
	Stopping bool
	// Names are the parameters' names in X's order (set by a Study; not
	// stored: they are the study's space); see Params.
	Names []string
}

// Status is a trial's life-cycle state.
type Status string

// Trial states: pending (proposed, not started), running (an evaluation is
// under way), complete (Value holds the result), failed (Error says why),
// pruned (stopped early by the study's pruner: Value is the last
// intermediate value; see Pruning). Pending and running trials are "in
// flight"; a resumed study re-runs them.
const (
	Pending  Status = "pending"
	Running  Status = "running"
	Complete Status = "complete"
	Failed   Status = "failed"
	Pruned   Status = "pruned"
)

// Done reports whether the state is final.
func (s Status) Done() bool { return s == Complete || s == Failed || s == Pruned }

// modelled reports whether the GP sees a trial in the state: complete
// ones at their value, pruned ones at their last reported value (see
// Pruning).
func (s Status) modelled() bool { return s == Complete || s == Pruned }

// Params returns the trial's point X by parameter name (Int parameters
// hold integral values). It is nil when the trial has no Names.
func (t Trial) Params() map[string]float64 {
	if len(t.Names) == 0 || len(t.Names) != len(t.X) {
		return nil
	}
	m := make(map[string]float64, len(t.X))
	for i, n := range t.Names {
		m[n] = t.X[i]
	}
	return m
}
