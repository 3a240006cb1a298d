package acq

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// factory builds a Proposer from Options. It returns an error for options it
// cannot honour (never panics on them).
type factory func(Options) (Proposer, error)

var registry = struct {
	sync.RWMutex
	m map[string]factory
}{m: map[string]factory{}}

// Register makes an acquisition available under name. It is meant to be
// called from init functions (package acq registers its baselines, package
// tes registers "tes", "tes-ep" and "tes-sp"); like database/sql.Register it panics
// when name is empty, f is nil or name is already taken, since that is a
// programming error, not user input.
func Register(name string, f factory) {
	if name == "" || f == nil {
		panic("acq: Register with empty name or nil factory")
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.m[name]; dup {
		panic("acq: Register called twice for " + name)
	}
	registry.m[name] = f
}

// Lookup builds the acquisition registered under name with options o.
func Lookup(name string, o Options) (Proposer, error) {
	registry.RLock()
	f, ok := registry.m[name]
	registry.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown acquisition %q: known ones are %s", name, strings.Join(Names(), ", "))
	}
	p, err := f(o)
	if err != nil {
		return nil, fmt.Errorf("acquisition %s: %w", name, err)
	}
	return p, nil
}

// Names returns the registered acquisition names in sorted order.
func Names() []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m))
	for n := range registry.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
