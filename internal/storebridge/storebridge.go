// Package storebridge hands a study database between package store and
// package host's handle on it (host.Storage) inside this module, so that
// host's exported API names no store type while the packages above it
// that also read the database directly (serve, bench) can share one
// handle. Package host sets both functions when it is initialized.
package storebridge

import "github.com/tesbo/tesbo/store"

var (
	// Wrap returns a *host.Storage for db.
	Wrap func(db store.Storage) any
	// Unwrap returns the database behind a *host.Storage (nil for nil).
	Unwrap func(hostStorage any) store.Storage
)
