//go:build unix

package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// lockOut takes the output directory's lock file, so that a second bench
// writing the same directory is refused at once rather than failing runs
// the first one holds and overwriting its tables. The lock (flock) goes
// with the process, a killed one included.
func lockOut(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the output directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("another bench (%s) is writing %s: wait for it, or give another --out", strings.TrimSpace(string(holder)), dir)
		}
		return nil, fmt.Errorf("lock the output directory: %w", err)
	}
	f.Truncate(0)
	fmt.Fprintf(f, "pid %d\n", os.Getpid())
	return func() { f.Close() }, nil
}
