package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// signals tracks SIGINT/SIGTERM: the first cancels the context (the study
// stops, in-flight evaluations get a grace period), a second exits at once.
type signals struct {
	got  chan os.Signal
	stop func()
	sig  os.Signal
}

func signalContext(parent context.Context) (context.Context, *signals) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancelCause(parent)
	s := &signals{got: make(chan os.Signal, 2)}
	signal.Notify(s.got, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sg := <-s.got:
			s.sig = sg
			cancel(fmt.Errorf("received %v", sg))
		case <-done:
			return
		}
		select {
		case sg := <-s.got:
			fmt.Fprintf(os.Stderr, "tesbo-host: second %v: exiting now (the database is consistent; in-flight evaluations will be re-run on resume)\n", sg)
			os.Exit(exitCodeFor(sg))
		case <-done:
		}
	}()
	s.stop = func() { signal.Stop(s.got); close(done); cancel(nil) }
	return ctx, s
}

func exitCodeFor(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitFailure
}
