package loader

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill a plugin when the host dies, however it
// dies (SIGKILL included), so no plugin outlives the host. Pdeathsig fires
// when the thread that started the child exits; Go never ends its threads
// except those locked by a goroutine that exits locked, and the loader
// starts plugins from ordinary goroutines.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
