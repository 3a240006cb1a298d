package host_test

import (
	"testing"

	"github.com/tesbo/tesbo/acq"
	_ "github.com/tesbo/tesbo/host" // importing host must register every acquisition
)

// TestRegistryHasDesignNames checks that importing host is enough to make
// all 13 acquisition names the README lists available: the baselines register
// from package acq, tes-ep and tes-sp from package tes, which host imports.
// Each must build a Proposer with the default options (acq.Register
// already refuses a name twice).
func TestRegistryHasDesignNames(t *testing.T) {
	design := []string{"tes-ep", "tes-sp", "ei", "pi", "ucb", "mes", "pes", "qei", "qei-cl", "bucb", "lp-ei", "ts", "random"}
	for _, name := range design {
		p, err := acq.Lookup(name, acq.Options{})
		if err != nil {
			t.Errorf("Lookup(%q) with default options after importing host: %v (registered: %v)", name, err, acq.Names())
		} else if p == nil {
			t.Errorf("Lookup(%q) returned a nil Proposer", name)
		}
	}
}
