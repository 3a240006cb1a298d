package main

import "github.com/spf13/cobra"

// newBenchCmd is the slot for 'tesbo-host bench' (issue 8: runs every
// problem × acquisition × batch × seed combination through host.Study,
// many studies in parallel in one process). Until it lands it reports
// itself as not available.
func newBenchCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "bench --problems a,b --acqs x,y --seeds N --iters N [--batch N] --out DIR",
		Short: "Run benchmark suites (not available yet)",
		RunE: func(*cobra.Command, []string) error {
			return usagef("bench is not implemented in this build yet")
		},
		DisableFlagParsing: true,
	}
}
