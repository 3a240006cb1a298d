package main

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/tesbo/tesbo/host"
)

// A signal before the study exists (while configuring the objective or
// storing the study and its warm start) is an interruption, exit 128 +
// signal, not the bad-input exit 2 the cancelled step's error would get.
func TestFinishInterruptedBeforeStudy(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalCause{syscall.SIGINT})
	err := finish(ctx, &signals{sig: syscall.SIGINT}, nil, errors.New("create study: context canceled"), nil, false, "x.db", nil)
	var ie interruptedError
	if !errors.As(err, &ie) || ie.code != 130 || !strings.Contains(err.Error(), "interrupted (received interrupt) while starting the study") {
		t.Fatalf("err = %v, want exit 130 and the interrupted line", err)
	}
	// Without a signal the refusal stays bad input.
	err = finish(context.Background(), &signals{}, nil, &host.InputError{Err: errors.New("bad")}, nil, false, "x.db", nil)
	var u usageError
	if !errors.As(err, &u) {
		t.Fatalf("err = %v (%T), want a usage error", err, err)
	}
}

// The summary of a --batch auto study says so, with its largest batch
// (it said "batch 5").
func TestSummaryAutoBatch(t *testing.T) {
	dir := t.TempDir()
	r := cli(t, dir, "run", "--objective", "synthetic/branin", "--batch", "auto", "--batch-max", "5", "--iters", "1", "--log-level", "error")
	if r.code != 0 || !strings.Contains(r.stdout, "tes, batch auto (at most 5), seed 1") {
		t.Fatalf("exit %d, stdout:\n%s", r.code, r.stdout)
	}
}
