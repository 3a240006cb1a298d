//go:build !linux

package loader

import (
	"errors"
	"os/exec"
)

// setProcAttr does nothing off Linux: plugins are stopped by Registry.Close
// and go-plugin's managed-client cleanup, but not if the host is killed.
func setProcAttr(*exec.Cmd) {}

// procGroup is the plugin process alone off Linux: the loader gives
// plugins no process group of their own there, and nothing kills them if
// the host is killed.
type procGroup struct{ cmd *exec.Cmd }

func newProcGroup(cmd *exec.Cmd) (*procGroup, error) { return &procGroup{cmd: cmd}, nil }

// kill kills the plugin process only.
func (g *procGroup) kill() {
	if g != nil && g.cmd.Process != nil {
		_ = g.cmd.Process.Kill()
	}
}

// release ends the plugin process.
func (g *procGroup) release() { g.kill() }

// limitMemory is Linux-only (RLIMIT_DATA through prlimit).
func limitMemory(*procGroup, int64) error {
	return errors.New("a plugin memory limit is supported on Linux only")
}

// killOrphanedGroups and leaderExited are Linux-only: elsewhere plugins
// have no process group of their own.
func killOrphanedGroups()         {}
func leaderExited(*exec.Cmd) bool { return false }
