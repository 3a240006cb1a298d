package loader

import "github.com/tesbo/tesbo/host"

// The loader's handles implement the contract the host reads them through
// (host/plugin.go): a method renamed on either side fails to compile here
// instead of silently turning a capability off.
var (
	_ host.ConfigureSupporter = (*Objective)(nil)
	_ host.NoiseFreeSupporter = (*Objective)(nil)
	_ host.EvalLimiter        = (*Objective)(nil)
	_ host.NeighbourFaulter   = (*Error)(nil)
	_ host.RunStopper         = (*Error)(nil)
	_ host.ReportsSupporter   = (*Objective)(nil)
)
