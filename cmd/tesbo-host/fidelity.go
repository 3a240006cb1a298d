package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/host"
)

// fidelityFlags are run's multi-fidelity flags (host.MultiFidelity).
type fidelityFlags struct {
	enabled bool
	fixed   float64
}

func (p *fidelityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&p.enabled, "multi-fidelity", false, "let the acquisition choose the step each evaluation runs to (its fidelity, e.g. epochs) with the point; the objective must declare its last step (MaxStep ≥ 2) and report its values (sdk.Report)")
	fl.Float64Var(&p.fixed, "fidelity-cost-fixed", 0, fmt.Sprintf("multi-fidelity: the cost every evaluation pays whatever its step, in units of one full evaluation (0 to %d); an evaluation to step s costs this + s/MaxStep", host.MaxFidelityCostFixed))
}

// settings checks the flags (with the pruning chosen) and returns the
// study's setting.
func (p *fidelityFlags) settings(pruning host.Pruning) (host.MultiFidelity, error) {
	switch {
	case !(p.fixed >= 0 && p.fixed <= host.MaxFidelityCostFixed):
		return host.MultiFidelity{}, usagef("bad --fidelity-cost-fixed %v: must be in [0, %d]", p.fixed, host.MaxFidelityCostFixed)
	case !p.enabled && p.fixed != 0:
		return host.MultiFidelity{}, usagef("--fidelity-cost-fixed needs --multi-fidelity")
	case p.enabled && pruning.Rule != "":
		return host.MultiFidelity{}, usagef("--multi-fidelity chooses where evaluations stop itself: drop --pruner %s", pruning.Rule)
	}
	return host.MultiFidelity{Enabled: p.enabled, CostFixed: p.fixed}, nil
}
