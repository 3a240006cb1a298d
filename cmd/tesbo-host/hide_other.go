//go:build !linux

package main

// hideSecrets does nothing outside Linux (see hide_linux.go).
func hideSecrets() {}
