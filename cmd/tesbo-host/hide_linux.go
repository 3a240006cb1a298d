//go:build linux

package main

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hideSecrets keeps what the host holds from its plugins where Linux lets
// it. The process becomes non-dumpable, so another process of the same
// user (a plugin: it runs as the user) can no longer read the host's
// /proc/PID/environ, mem or maps; its plugins, being new programs, are
// dumpable as usual. And the secrets among the arguments (maskArgs) are
// overwritten in the memory /proc/PID/cmdline shows, after os.Args took
// copies: the runtime's os.Args point at that memory. It must run first
// in main, before anything keeps a part of an argument.
func hideSecrets() {
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	masked := maskArgs(os.Args)
	for i, a := range os.Args {
		m := masked[i]
		if m == a {
			continue
		}
		os.Args[i] = strings.Clone(a)
		copy(unsafe.Slice(unsafe.StringData(a), len(a)), m)
	}
}
