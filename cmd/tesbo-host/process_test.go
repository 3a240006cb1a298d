package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tesbo/tesbo/store"
)

// proc is a running CLI with its stdout lines collected.
type proc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	done  chan struct{}
	err   error
	se    strings.Builder
}

func start(t *testing.T, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TESBO_PLUGINS="+pluginsDir)
	p := &proc{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &p.se
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		br := bufio.NewReader(out)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				break // a partial last line (killed mid-write) is not a report
			}
			p.mu.Lock()
			p.lines = append(p.lines, strings.TrimSuffix(l, "\n"))
			p.mu.Unlock()
		}
		io.Copy(io.Discard, out)
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p
}

func (p *proc) nLines() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.lines)
}

func studyExists(dbPath, name string) bool {
	if _, err := os.Stat(dbPath); err != nil {
		return false
	}
	db, err := store.Open(dbPath, store.Options{})
	if err != nil {
		return false
	}
	defer db.Close()
	_, err = db.Study(context.Background(), name)
	return err == nil
}

// pluginProcesses counts running processes started from the test's plugins
// directory (waiting up to 2 s for exiting ones).
func pluginProcesses(t *testing.T) int {
	t.Helper()
	n := 0
	for range 40 {
		n = 0
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && strings.Contains(string(b), pluginsDir) {
				st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
				if !strings.Contains(string(st), ") Z ") { // zombies are exited
					n++
				}
			}
		}
		if n == 0 {
			return 0
		}
		time.Sleep(50 * time.Millisecond)
	}
	return n
}

// waitDone waits up to d for p to exit, killing it and failing with msg
// when it does not.
func waitDone(t *testing.T, p *proc, d time.Duration, msg string) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Kill()
		t.Fatal(msg)
	}
}
