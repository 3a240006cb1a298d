//go:build unix

package tes

import "syscall"

// processCPU returns the user+system CPU time of the process in ns, or -1.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
