//go:build !linux

package loader

import "os/exec"

// setProcAttr does nothing off Linux: plugins are stopped by Registry.Close
// and go-plugin's managed-client cleanup, but not if the host is killed.
func setProcAttr(*exec.Cmd) {}
