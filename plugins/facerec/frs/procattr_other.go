//go:build !linux

package frs

import "os/exec"

// setProcAttr has no parent-death signal outside Linux; Pool.Close kills
// the sidecars, and each sidecar exits when its stdin closes (which happens
// when this process dies).
func setProcAttr(cmd *exec.Cmd) {}

// startCmd starts cmd.
func startCmd(cmd *exec.Cmd) error { return cmd.Start() }

// killTree kills the sidecar process.
func killTree(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
