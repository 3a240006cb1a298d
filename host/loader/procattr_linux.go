package loader

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts a plugin in a process group of its own, so that
// killGroup reaches what it started (a wrapper script's interpreter, a
// `sleep` holding its stdout), and makes the kernel kill it when the host
// dies, however it dies (SIGKILL included), so no plugin outlives the host.
// Pdeathsig fires when the thread that started the child exits; Go never
// ends its threads except those locked by a goroutine that exits locked,
// and the loader starts plugins from ordinary goroutines. A plugin outside
// the terminal's foreground group no longer receives the terminal's Ctrl-C:
// the host stops its plugins itself.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// killGroup kills a started plugin's whole process group at once. Until
// its group is gone a plugin is not finished: go-plugin waits for EOF on the
// plugin's stdout and stderr, which any child still holding them delays
// (indefinitely, for a daemon).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil || cmd.Process.Pid <= 0 {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
