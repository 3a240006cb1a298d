package host_test

import (
	"testing"

	"github.com/tesbo/tesbo/acq"
	_ "github.com/tesbo/tesbo/host" // importing host must register every acquisition
)

// TestRegistryHasDesignNames checks that importing host is enough to make
// all 13 acquisition names of DESIGN.md available: the baselines register
// from package acq, tes-ep and tes-sp from package tes, which host imports.
// Each name must appear exactly once in acq.Names and build a Proposer with
// the default options.
func TestRegistryHasDesignNames(t *testing.T) {
	design := []string{"tes-ep", "tes-sp", "ei", "pi", "ucb", "mes", "pes", "qei", "qei-cl", "bucb", "lp-ei", "ts", "random"}
	count := map[string]int{}
	for _, n := range acq.Names() {
		count[n]++
	}
	for _, name := range design {
		switch count[name] {
		case 1:
		case 0:
			t.Errorf("%q is not registered after importing host (registered: %v)", name, acq.Names())
			continue
		default:
			t.Errorf("%q appears %d times in acq.Names()", name, count[name])
		}
		p, err := acq.Lookup(name, acq.Options{})
		if err != nil {
			t.Errorf("Lookup(%q) with default options: %v", name, err)
		} else if p == nil {
			t.Errorf("Lookup(%q) returned a nil Proposer", name)
		}
	}
}
