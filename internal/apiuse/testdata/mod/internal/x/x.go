// Package x is internal: not counted.
package x

// Hidden is called by nobody.
func Hidden() {}
