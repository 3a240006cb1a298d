package main

import (
	"strings"
	"testing"
)

// The --batch usage read off the registry is the text the CLI printed when
// it named the acquisitions by hand.
func TestBatchFlagHelpFromRegistry(t *testing.T) {
	const want = "points proposed per BO iteration (|B|; at most 1000, 32 for nehvi, 100 for qei, tes, tes-ep and tes-sp), or auto: as many as add information about the maximizer (tes, tes-ep, tes-sp; see --batch-max, --batch-min-gain, --batch-rel-gain)"
	if got := batchFlagHelp(); got != want {
		t.Fatalf("--batch usage\n got %s\nwant %s", got, want)
	}
	if got := newWorkerCmd().Long; !strings.Contains(got, "(acquisitions\nbucb, cei, lp-ei, nehvi, parego, qei, qei-cl, random, tes, tes-ep, tes-sp).") {
		t.Fatalf("worker help does not list the acquisitions that handle pending points:\n%s", got)
	}
	if got := andList([]string{"a"}); got != "a" {
		t.Fatalf("andList(a) = %q", got)
	}
}
