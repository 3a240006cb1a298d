// Command testprogress reads `go test -json` on stdin and prints, as each
// package finishes, go test's own closing line for it ("ok  \tpkg\t12.3s",
// "FAIL\tpkg\t3.1s", "?   \tpkg\t[no test files]") — so a run reads like
// plain go test and CI can judge it by those lines — plus the whole output
// of every failed test and of every failed build. While packages run it
// says every minute which ones are still running, so that a long suite is
// never silent for minutes. It ends with a one-line summary and exits 1
// when any test or build failed, or when the stream ended with a package
// unfinished or with no package at all (go test could not run); else 0.
//
//	go test -json ./... | go run ./internal/testprogress
package main

import (
	"io"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Stdin, os.Stdout, time.Minute))
}

// run is main with its input, output and heartbeat interval (≤ 0: none)
// as arguments; it returns the exit status.
func run(in io.Reader, out io.Writer, heartbeat time.Duration) int {
	p := newProgress(out, time.Now)
	if heartbeat > 0 {
		stop := p.heartbeat(heartbeat)
		defer stop()
	}
	p.read(in)
	return p.finish()
}
