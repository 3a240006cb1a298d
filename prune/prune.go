// Package prune decides when to stop an evaluation early from the
// intermediate values it reports (accuracy after each epoch, say): the
// median stopping rule (Median), asynchronous successive halving (ASHA)
// and Hyperband built from it (Hyperband). It is its own package because
// the rules are pure functions of learning curves, independent of how a
// study stores or evaluates them; the host feeds them and imports nothing
// back.
//
// Values are in the maximized sign convention (the host negates a
// minimizing objective's values first): larger is better everywhere here.
package prune

// Point is one intermediate value: the value an evaluation reported at a
// step (an epoch, a number of samples; steps increase along an evaluation).
type Point struct {
	Step  int
	Value float64
}

// Curve is one trial's intermediate values in reporting order (steps
// strictly increasing).
type Curve struct {
	ID     int // the trial's ID (Hyperband assigns brackets by it)
	Points []Point
	// Complete says the evaluation ran to its end; false for one that
	// was itself pruned (and, in a trial's own curve, for the running one).
	Complete bool
}

// last returns the curve's latest point (ok false when it is empty).
func (c Curve) last() (Point, bool) {
	if len(c.Points) == 0 {
		return Point{}, false
	}
	return c.Points[len(c.Points)-1], true
}

// Pruner decides, each time trial reports a value (its last point), whether
// to stop it. history holds the curves of the trials the decision may
// compare with (finished trials, ordered by ID); a Pruner keeps no state
// between calls, so the same curves give the same decision, also after a
// study is resumed.
type Pruner interface {
	Prune(trial Curve, history []Curve) bool
}
