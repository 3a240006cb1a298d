package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tesbo/tesbo/host"
)

// Help text that names acquisitions by what they can do is read off the
// registry (host.BatchLimits, host.SizedAcquisitions,
// host.AsyncAcquisitions), so a new acquisition shows up where its
// declared capabilities put it.

// batchFlagHelp is the usage of run's --batch: the limits, the smaller
// ones per acquisition, and the acquisitions that size batches themselves.
func batchFlagHelp() string {
	return fmt.Sprintf("points proposed per BO iteration (|B|; at most %d%s), or auto: as many as add information about the maximizer (%s; see --batch-max, --batch-min-gain, --batch-rel-gain)",
		host.MaxBatch, smallerBatchLimits(), strings.Join(host.SizedAcquisitions(), ", "))
}

// smallerBatchLimits phrases the registered acquisitions' own batch limits,
// ", 100 for tes, tes-ep and tes-sp", one clause per limit, smallest first.
func smallerBatchLimits() string {
	byLimit := map[int][]string{}
	for name, n := range host.BatchLimits() {
		byLimit[n] = append(byLimit[n], name)
	}
	var limits []int
	for n := range byLimit {
		limits = append(limits, n)
	}
	slices.Sort(limits)
	var b strings.Builder
	for _, n := range limits {
		names := byLimit[n]
		slices.Sort(names)
		fmt.Fprintf(&b, ", %d for %s", n, andList(names))
	}
	return b.String()
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
