package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tesbo/tesbo/host"
)

// warnPasswordInURL prints one line on w when the --db URL carries a
// password: a command line is readable by every process on the machine,
// plugins included (/proc/PID/cmdline).
func warnPasswordInURL(w io.Writer, target string) {
	if host.HasPassword(target) {
		fmt.Fprintln(w, "tesbo-host: warning: the --db URL holds a password, which other processes (plugins too) can read from the command line; drop it from the URL and set PGPASSWORD or put it in ~/.pgpass")
	}
}

// maskArgs returns args with their secrets overwritten by 'x', each
// argument keeping its length: the passwords of postgres:// URLs
// (maskURLPasswords) and serve's --token value.
func maskArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = maskURLPasswords(a)
		switch {
		case i > 0 && (args[i-1] == "--token" || args[i-1] == "-token"):
			out[i] = strings.Repeat("x", len(a))
		case strings.HasPrefix(a, "--token="):
			out[i] = "--token=" + strings.Repeat("x", len(a)-len("--token="))
		}
	}
	return out
}

// maskURLPasswords returns arg with the bytes of every password in the
// postgres:// URLs it holds (the user part's, password= parameters)
// replaced by 'x', keeping its length so it can overwrite arg in place.
func maskURLPasswords(arg string) string {
	if !strings.Contains(arg, "postgres://") && !strings.Contains(arg, "postgresql://") {
		return arg
	}
	b := []byte(arg)
	mask := func(from, to int) {
		for i := from; i < to; i++ {
			b[i] = 'x'
		}
	}
	for off := 0; ; {
		i := strings.Index(arg[off:], "://")
		if i < 0 {
			break
		}
		i += off + len("://")
		end := len(arg)
		if j := strings.IndexAny(arg[i:], "/?#"); j >= 0 {
			end = i + j
		}
		if at := strings.LastIndexByte(arg[i:end], '@'); at >= 0 {
			if c := strings.IndexByte(arg[i:i+at], ':'); c >= 0 {
				mask(i+c+1, i+at)
			}
		}
		off = i
	}
	for off := 0; ; {
		j := strings.Index(arg[off:], "password=")
		if j < 0 {
			break
		}
		j += off
		if j > 0 && (arg[j-1] == '?' || arg[j-1] == '&') {
			k := j + len("password=")
			e := len(arg)
			if n := strings.IndexAny(arg[k:], "&#"); n >= 0 {
				e = k + n
			}
			mask(k, e)
		}
		off = j + 1
	}
	return string(b)
}
