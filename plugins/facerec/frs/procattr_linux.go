//go:build linux

package frs

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// setProcAttr makes the sidecar die with its parent: the kernel sends it
// SIGKILL when the thread that forked it exits. startCmd forks from one
// goroutine locked to its own OS thread for the life of the process, so that
// thread exits only when the process does (even by SIGKILL). Setpgid puts
// the sidecar in its own process group so that killTree also reaches
// programs an exec: command spawned, and a Ctrl-C at the terminal goes to
// the host, which shuts plugins down in order.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

var (
	starterOnce sync.Once
	starterCh   chan startReq
)

type startReq struct {
	cmd  *exec.Cmd
	errc chan error
}

// startCmd runs cmd.Start on the dedicated starter thread.
func startCmd(cmd *exec.Cmd) error {
	starterOnce.Do(func() {
		starterCh = make(chan startReq)
		go func() {
			// Never unlocked: this thread must live as long as the process.
			runtime.LockOSThread()
			for r := range starterCh {
				r.errc <- r.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	starterCh <- startReq{cmd: cmd, errc: errc}
	return <-errc
}

// killTree sends SIGKILL to the sidecar's process group.
func killTree(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		_ = cmd.Process.Kill()
	}
}
