//go:build unix

package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// pidAlive reports whether process pid of this host is running. Where /proc
// exists it is read, so that a zombie (killed, not yet reaped by its
// parent) counts as dead; elsewhere kill(pid, 0) answers (EPERM: it exists
// but belongs to another user).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		// The state follows the command name, which is in parentheses and
		// may itself hold spaces and parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
			st := b[i+2]
			return st != 'Z' && st != 'X'
		}
		return true
	}
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat("/proc/self/stat"); err == nil {
			return false // /proc is there and the process is not
		}
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
