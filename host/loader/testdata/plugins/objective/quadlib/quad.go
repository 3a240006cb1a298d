// Package quadlib is a library sub-package of the objective test plugin:
// discovery must treat the plugin directory as one Go plugin and never
// report this package separately.
package quadlib

// Value is offset − (a−0.3)² − (b−0.7)².
func Value(offset, a, b float64) float64 {
	return offset - (a-0.3)*(a-0.3) - (b-0.7)*(b-0.7)
}
