package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
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

// limitMemory sets RLIMIT_DATA to limit bytes on every process of the
// plugin's process group (a wrapper and the interpreter it started, whose
// future children inherit it). See Options.MemoryLimit.
func limitMemory(cmd *exec.Cmd, limit int64) error {
	if cmd.Process == nil {
		return errors.New("the plugin process has not started")
	}
	pgid := cmd.Process.Pid
	pids, err := groupMembers(pgid)
	if err != nil {
		return err
	}
	rl := &unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}
	for _, pid := range pids {
		if err := unix.Prlimit(pid, unix.RLIMIT_DATA, rl, nil); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("prlimit(%d, RLIMIT_DATA, %d): %w", pid, limit, err)
		}
	}
	return nil
}

// groupMembers lists the processes of process group pgid.
func groupMembers(pgid int) ([]int, error) {
	var pids []int
	err := eachProcess(func(pid int, st pidStat) {
		if st.pgrp == pgid {
			pids = append(pids, pid)
		}
	})
	if err != nil {
		return nil, err
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("no process in group %d (the plugin exited)", pgid)
	}
	return pids, nil
}

// killOrphanedGroups kills the process group of every child of the host
// that has exited but leads a group still holding members: a plugin (only
// plugins get groups of their own) that died and left children holding
// its stdout or stderr, which keep go-plugin from noticing the exit until
// they end. It is used while a plugin starts, before its pid is known.
func killOrphanedGroups() {
	me := os.Getpid()
	var leaders []int
	_ = eachProcess(func(pid int, st pidStat) {
		if st.ppid == me && st.state == 'Z' && st.pgrp == pid {
			leaders = append(leaders, pid)
		}
	})
	for _, pid := range leaders {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
}

// leaderExited reports whether a started plugin process has exited and
// awaits reaping; killGroup then frees what keeps it from being reaped.
func leaderExited(cmd *exec.Cmd) bool {
	if cmd.Process == nil {
		return false
	}
	st, ok := readStat(strconv.Itoa(cmd.Process.Pid))
	return ok && st.state == 'Z'
}

// pidStat is what the loader reads of /proc/PID/stat.
type pidStat struct {
	state      byte
	ppid, pgrp int
}

func readStat(pid string) (pidStat, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return pidStat{}, false // gone meanwhile
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and ")".
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return pidStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return pidStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgrp, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return pidStat{}, false
	}
	return pidStat{state: f[0][0], ppid: ppid, pgrp: pgrp}, true
}

// eachProcess calls fn for every process in /proc.
func eachProcess(fn func(pid int, st pidStat)) error {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(e.Name()); ok {
			fn(pid, st)
		}
	}
	return nil
}
