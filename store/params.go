package store

// Params returns the trial's point X by parameter name (Int parameters
// hold integral values). It is nil when the trial has no Names (a trial
// read from the database directly rather than through a study).
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
