// Package lib is the fixture of apiuse's tests: each name says how other
// packages use it.
package lib

// Used is called by cmd.
func Used() {}

// Unused is called by nobody.
func Unused() { unusedHelper() }

func unusedHelper() {}

// OwnTest is called by lib's own external test only.
func OwnTest() {}

// T is never named outside, but cmd reads a field of the T that New
// returns.
type T struct{ F int }

// New returns a T.
func New() *T { return &T{} }

// String makes T a fmt.Stringer.
func (T) String() string { return "T" }

// Helper is called by nobody.
func (T) Helper() {}

// E is an error nobody outside names.
type E struct{ err error }

func (e E) Error() string { return e.err.Error() }

// Unwrap is called by package errors.
func (e E) Unwrap() error { return e.err }
