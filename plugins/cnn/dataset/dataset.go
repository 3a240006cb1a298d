// Package dataset reads the image-classification data sets of tesbo's CNN
// objective: Fashion-MNIST in IDX format (as shipped by Debian's
// dataset-fashion-mnist package) and CIFAR-10 in its binary format. It is a
// package of its own so the readers can be tested on small generated files
// without the network code.
//
// Every reader returns an error, never panics, on missing, truncated or
// malformed files: a *missingError or *MalformedError naming the file and
// saying how to get a good copy. The training and test sets a reader
// returns have the same image shape (checkPair).
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

// size returns the number of examples.
func (s *Set) size() int { return len(s.Labels) }

// Head returns the first n examples (all of them if n ≤ 0 or n ≥ size()),
// sharing storage with s.
func (s *Set) Head(n int) *Set {
	if n <= 0 || n >= s.size() {
		return s
	}
	h := *s
	h.Pixels = s.Pixels[:n*s.H*s.W*s.C]
	h.Labels = s.Labels[:n]
	return &h
}

// Len returns the number of examples.
func (s *Set) Len() int { return s.size() }

// Slice returns examples lo to hi − 1 (0 ≤ lo ≤ hi ≤ Len()), sharing
// storage with s.
func (s *Set) Slice(lo, hi int) *Set {
	n := s.H * s.W * s.C
	h := *s
	h.Pixels = s.Pixels[lo*n : hi*n]
	h.Labels = s.Labels[lo:hi]
	return &h
}

// scaledPixels returns the pixels scaled to [0, 1] (value/255).
func (s *Set) scaledPixels() []float32 {
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

// missingError reports a data file that does not exist, with what to do
// about it.
type missingError struct {
	Path string
	Hint string // how to get the file
}

// Error says which file is missing and how to get it.
func (e *missingError) Error() string {
	return fmt.Sprintf("dataset: %s not found; %s", e.Path, e.Hint)
}

// Is makes errors.Is(err, fs.ErrNotExist) true for a missingError.
func (e *missingError) Is(target error) bool { return target == fs.ErrNotExist }

// MalformedError reports a data file that exists but cannot be used
// (wrong magic number, truncated, a label out of range, a shape that does
// not match its companion file), with how to get a good copy.
type MalformedError struct {
	Path string // the offending file
	Err  error  // what is wrong with it
	Hint string // how to get a good copy
}

// Error says which file is unusable, why, and how to replace it.
func (e *MalformedError) Error() string {
	return fmt.Sprintf("dataset: %s: %v (the file is damaged, cut short or not the expected data set); to get a good copy, %s",
		e.Path, e.Err, e.Hint)
}

// Unwrap returns the underlying problem, e.g. io.ErrUnexpectedEOF for a
// truncated file.
func (e *MalformedError) Unwrap() error { return e.Err }

// checkPair checks that a training and a test set can be used together:
// each is non-empty, holds N·H·W·C pixels and labels in [0, Classes), and
// both have the same image shape and number of classes. A network built for
// the training images would otherwise read past the end of (or misread) the
// test images when scoring them.
func checkPair(train, test *Set) error {
	for _, s := range []*Set{train, test} {
		if err := s.check(); err != nil {
			return err
		}
	}
	if train.H != test.H || train.W != test.W || train.C != test.C {
		return fmt.Errorf("test images %s are %d×%d×%d but training images %s are %d×%d×%d",
			test.Name, test.H, test.W, test.C, train.Name, train.H, train.W, train.C)
	}
	if train.Classes != test.Classes {
		return fmt.Errorf("test set %s has %d classes but training set %s has %d",
			test.Name, test.Classes, train.Name, train.Classes)
	}
	return nil
}

// check validates one set's sizes and labels.
func (s *Set) check() error {
	if s.H < 1 || s.W < 1 || s.C < 1 || s.Classes < 1 {
		return fmt.Errorf("set %s has image shape %d×%d×%d and %d classes; all must be positive", s.Name, s.H, s.W, s.C, s.Classes)
	}
	if s.size() == 0 {
		return fmt.Errorf("set %s has no examples", s.Name)
	}
	if want := s.size() * s.H * s.W * s.C; len(s.Pixels) != want {
		return fmt.Errorf("set %s has %d pixel values for %d images of %d×%d×%d, want %d",
			s.Name, len(s.Pixels), s.size(), s.H, s.W, s.C, want)
	}
	for i, l := range s.Labels {
		if int(l) >= s.Classes {
			return fmt.Errorf("set %s: label %d of example %d outside [0, %d)", s.Name, l, i, s.Classes)
		}
	}
	return nil
}

// missing wraps err as a missingError when it says the file does not exist.
func missing(path, hint string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return &missingError{Path: path, Hint: hint}
	}
	return fmt.Errorf("dataset: %w", err)
}
