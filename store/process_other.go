//go:build !unix

package store

// pidAlive cannot tell on this platform: every holder counts as alive, so
// a dead holder's lease is taken over only once it expires.
func pidAlive(pid int) bool { return pid > 0 }
