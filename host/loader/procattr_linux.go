package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// setProcAttr puts a child the loader starts for its own work (a go
// build) in a process group of its own, and makes the kernel kill it when
// the host dies. Pdeathsig fires when the thread that started the child
// exits; Go never ends its threads except those locked by a goroutine that
// exits locked, and the loader starts children from ordinary goroutines.
// Plugins get more: see newProcGroup.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// watcherScript is the program of a plugin's watcher: it waits for EOF on
// its stdin, the read end of a pipe only the host holds the write end of,
// and then kills its own process group, which is the plugin's. The host's
// exit closes the pipe however the host dies (SIGKILL included), and so
// does release.
const watcherScript = "read x; kill -KILL 0"

// procGroup is the process group one plugin process runs in, so that what
// the plugin starts (a wrapper script's interpreter, a forked helper, a
// `sleep` holding its stdout) is stopped with it, and dies with the host.
//
// PR_SET_PDEATHSIG reaches only the host's direct child, so the group is
// led by a watcher: a /bin/sh started before the plugin, in a new group,
// holding the read end of a lifeline pipe. The plugin joins the watcher's
// group as it starts (Setpgid with the watcher's pid), so the group exists
// before the plugin runs any code and nothing it forks can be missed. When
// the host dies the pipe closes and the watcher kills the group; while the
// host lives the group is killed as a whole by kill and release. A child
// that moves itself to another group or session (setsid, a daemon)
// escapes, as it escapes any group-based containment.
//
// Without /bin/sh the plugin leads a group of its own, killed as a whole
// by kill and release, and dies with the host through PR_SET_PDEATHSIG
// only (its children may then outlive a killed host).
type procGroup struct {
	cmd *exec.Cmd

	mu       sync.Mutex
	pgid     int       // the watcher's pid; 0 without a watcher (the plugin's own group)
	watcher  *exec.Cmd // nil without a watcher
	lifeline *os.File  // the write end of the watcher's stdin
	released bool
}

// newProcGroup prepares cmd (not started yet) to run in a new process
// group led by a watcher. On error (no /bin/sh, no pipe) the group is still
// usable, as the plugin's own group without a watcher; the error says why.
func newProcGroup(cmd *exec.Cmd) (*procGroup, error) {
	g := &procGroup{cmd: cmd}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	r, w, err := os.Pipe() // close-on-exec: no plugin inherits either end
	if err != nil {
		return g, fmt.Errorf("lifeline pipe: %w", err)
	}
	wc := exec.Command("/bin/sh", "-c", watcherScript, "tesbo-plugin-watcher")
	wc.Stdin = r
	wc.Env = []string{}
	// A group of its own: a Ctrl-C to the terminal's foreground group must
	// not end the watcher before the host has stopped its plugins. No
	// Pdeathsig: it has to outlive the host to do its job.
	wc.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = wc.Start()
	r.Close()
	if err != nil {
		w.Close()
		return g, fmt.Errorf("start the plugin's watcher: %w", err)
	}
	g.pgid, g.watcher, g.lifeline = wc.Process.Pid, wc, w
	cmd.SysProcAttr.Pgid = g.pgid
	return g, nil
}

// groupID is the plugin's process group id, 0 while unknown.
func (g *procGroup) groupID() int {
	if g.pgid != 0 {
		return g.pgid
	}
	if g.cmd.Process != nil {
		return g.cmd.Process.Pid
	}
	return 0
}

// kill kills the plugin's whole process group at once (the watcher too).
// Until its group is gone a plugin is not finished: go-plugin waits for
// EOF on the plugin's stdout and stderr, which any child still holding
// them delays (indefinitely, for a daemon). After release it does nothing:
// the group's id may then belong to someone else.
func (g *procGroup) kill() {
	if g == nil { // a session that never had a process
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.released {
		g.killLocked()
	}
}

func (g *procGroup) killLocked() {
	if id := g.groupID(); id > 0 {
		_ = syscall.Kill(-id, syscall.SIGKILL)
	}
}

// release kills the group, closes the lifeline and reaps the watcher: the
// end of a plugin process. It is idempotent.
func (g *procGroup) release() {
	if g == nil {
		return
	}
	g.mu.Lock()
	if g.released {
		g.mu.Unlock()
		return
	}
	g.killLocked()
	g.released = true
	w := g.watcher
	if g.lifeline != nil {
		g.lifeline.Close() // a watcher that escaped the kill ends the group itself
	}
	g.mu.Unlock()
	if w != nil {
		_ = w.Wait()
	}
}

// limitMemory sets RLIMIT_DATA to limit bytes on every process of the
// plugin's process group (a wrapper and the interpreter it started, whose
// future children inherit it) but its watcher, which must stay able to
// kill the group. See Options.MemoryLimit.
func limitMemory(g *procGroup, limit int64) error {
	if g.cmd.Process == nil {
		return errors.New("the plugin process has not started")
	}
	pids, err := groupMembers(g.groupID())
	if err != nil {
		return err
	}
	rl := &unix.Rlimit{Cur: uint64(limit), Max: uint64(limit)}
	for _, pid := range pids {
		if pid == g.pgid {
			continue // the watcher
		}
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
// that has exited but whose group (not the host's) still holds members: a
// plugin (only plugins and go builds get groups of their own) that died
// and left children holding its stdout or stderr, which keep go-plugin
// from noticing the exit until they end. It is used while a plugin starts,
// before its pid is known. The exited child, not reaped yet, keeps its
// group's id from being reused.
func killOrphanedGroups() {
	me, own := os.Getpid(), syscall.Getpgrp()
	var groups []int
	_ = eachProcess(func(pid int, st pidStat) {
		if st.ppid == me && st.state == 'Z' && st.pgrp != own && st.pgrp > 0 {
			groups = append(groups, st.pgrp)
		}
	})
	for _, pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
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
