//go:build !linux

package loader

import (
	"errors"
	"os/exec"
)

// setProcAttr does nothing off Linux: plugins are stopped by Registry.Close
// and go-plugin's managed-client cleanup, but not if the host is killed.
func setProcAttr(*exec.Cmd) {}

// killGroup kills the plugin process only: off Linux the loader does not
// give plugins a process group of their own.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// limitMemory is Linux-only (RLIMIT_DATA through prlimit).
func limitMemory(*exec.Cmd, int64) error {
	return errors.New("a plugin memory limit is supported on Linux only")
}

// killOrphanedGroups and leaderExited are Linux-only: elsewhere plugins
// have no process group of their own.
func killOrphanedGroups()         {}
func leaderExited(*exec.Cmd) bool { return false }
