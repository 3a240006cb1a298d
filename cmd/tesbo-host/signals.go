package main

import (
	"context"
	"errors"
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
			cancel(signalCause{sg})
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

// signalCause is the cause of a context a signal cancelled.
type signalCause struct{ sig os.Signal }

func (c signalCause) Error() string { return fmt.Sprintf("received %v", c.sig) }

// interruptedBy returns the interruptedError for ctx cancelled by a
// signal before anything was evaluated, saying what was going on (nil
// when no signal cancelled it): the error the cancellation caused (a
// plugin's start cut short) says nothing about the plugin.
func interruptedBy(ctx context.Context, doing string) error {
	var c signalCause
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &c) {
		return nil
	}
	return interruptedError{code: exitCodeFor(c.sig), err: fmt.Errorf("interrupted (%v) while %s; nothing was evaluated", c, doing)}
}

func exitCodeFor(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitFailure
}
