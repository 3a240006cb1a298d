// Package dataset reads the image-classification data sets of tesbo's CNN
// objective: Fashion-MNIST in IDX format (as shipped by Debian's
// dataset-fashion-mnist package) and CIFAR-10 in its binary format. It is a
// package of its own so the readers can be tested on small generated files
// without the network code.
//
// Every reader returns an error, never panics, on missing, truncated or
// malformed files; a missing file's error says how to get it.
package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
)

// Set is a labelled image set: N examples of H×W×C bytes stored
// example-major, each image height × width × channels (channels fastest).
type Set struct {
	Name    string
	H, W, C int
	Classes int
	Pixels  []byte // N·H·W·C values in [0, 255]
	Labels  []byte // N labels in [0, Classes)
}

// Len returns the number of examples.
func (s *Set) Len() int { return len(s.Labels) }

// Head returns the first n examples (all of them if n ≤ 0 or n ≥ Len),
// sharing storage with s.
func (s *Set) Head(n int) *Set {
	if n <= 0 || n >= s.Len() {
		return s
	}
	h := *s
	h.Pixels = s.Pixels[:n*s.H*s.W*s.C]
	h.Labels = s.Labels[:n]
	return &h
}

// Float32 returns the pixels scaled to [0, 1] (value/255).
func (s *Set) Float32() []float32 {
	x := make([]float32, len(s.Pixels))
	for i, p := range s.Pixels {
		x[i] = float32(p) / 255
	}
	return x
}

// ChannelStats returns each channel's pixel mean and standard deviation on
// the [0, 1] scale (value/255), for Standardized.
func (s *Set) ChannelStats() (mean, std []float64) {
	mean, std = make([]float64, s.C), make([]float64, s.C)
	n := len(s.Pixels) / max(s.C, 1)
	if n == 0 {
		for c := range std {
			std[c] = 1
		}
		return mean, std
	}
	sum, sq := make([]float64, s.C), make([]float64, s.C)
	for i, p := range s.Pixels {
		v := float64(p) / 255
		sum[i%s.C] += v
		sq[i%s.C] += v * v
	}
	for c := range mean {
		mean[c] = sum[c] / float64(n)
		std[c] = math.Sqrt(max(sq[c]/float64(n)-mean[c]*mean[c], 0))
		if std[c] < 1e-6 { // a constant channel: leave it centred, unscaled
			std[c] = 1
		}
	}
	return mean, std
}

// Standardized returns the pixels as (value/255 − mean[c]) / std[c] per
// channel c, with mean and std usually the training set's ChannelStats.
func (s *Set) Standardized(mean, std []float64) []float32 {
	x := make([]float32, len(s.Pixels))
	for i, p := range s.Pixels {
		c := i % s.C
		x[i] = float32((float64(p)/255 - mean[c]) / std[c])
	}
	return x
}

// IntLabels returns the labels as ints.
func (s *Set) IntLabels() []int {
	y := make([]int, len(s.Labels))
	for i, l := range s.Labels {
		y[i] = int(l)
	}
	return y
}

// MissingError reports a data file that does not exist, with what to do
// about it.
type MissingError struct {
	Path string
	Hint string // how to get the file
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("dataset: %s not found; %s", e.Path, e.Hint)
}

// Is makes errors.Is(err, fs.ErrNotExist) true for a MissingError.
func (e *MissingError) Is(target error) bool { return target == fs.ErrNotExist }

// missing wraps err as a MissingError when it says the file does not exist.
func missing(path, hint string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &MissingError{Path: path, Hint: hint}
	}
	return fmt.Errorf("dataset: %w", err)
}
