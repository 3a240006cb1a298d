package frs

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
)

// protocolVersion is the version of the sidecar protocol (PROTOCOL.md) this
// client speaks. A sidecar whose ready line announces another version is
// refused.
const protocolVersion = 1

// DescriptorLen is the length of a face descriptor.
const DescriptorLen = 128

// NumLandmarks is the number of points of the 68-point landmark scheme
// (iBUG 300-W / dlib order: jaw 0–16, brows 17–26, nose 27–35, eyes 36–47,
// mouth 48–67).
const NumLandmarks = 68

// Point is a position in image pixels (x right, y down; pixel centres at
// integer coordinates).
type Point struct{ X, Y float64 }

// Box is an axis-aligned rectangle in image pixels: top-left corner (X, Y),
// width W and height H.
type Box struct{ X, Y, W, H float64 }

// Face is one face found by Analyze.
type Face struct {
	Box        Box       // detection box
	Score      float64   // detector confidence in [0, 1]
	Landmarks  []Point   // NumLandmarks points
	Descriptor []float64 // DescriptorLen values; nil if not requested
}

// Detector names a face detector of the bundled sidecar.
type Detector string

const (
	// SSD is SSD-MobileNetV1: the more accurate detector (~0.7 s per image here).
	SSD Detector = "ssd"
	// tiny is the tiny face detector: faster (~0.15–0.25 s), less accurate.
	tiny Detector = "tiny"
)

// AnalyzeOptions configures Analyze. The zero value means SSD, minimum score
// 0.5, descriptors computed.
type AnalyzeOptions struct {
	Detector     Detector // "" means SSD
	MinScore     float64  // detection threshold in (0, 1]; 0 means 0.5
	NoDescriptor bool     // skip descriptors (detection and landmarks only)
}

// FRS is a black-box face-recognition system. Implementations are safe for
// concurrent use.
type FRS interface {
	// Analyze finds the faces in img, most confident first.
	Analyze(ctx context.Context, img image.Image, o AnalyzeOptions) ([]Face, error)
	// Describe returns the descriptor of the face whose 68 landmarks (in
	// img's pixel coordinates) are given, without running the detector.
	Describe(ctx context.Context, img image.Image, landmarks []Point) ([]float64, error)
	// Close releases the system (stops its processes).
	Close() error
}

// errNotInstalled is wrapped by the error Start returns when the bundled
// sidecar's npm packages (or node itself) are missing.
var errNotInstalled = errors.New("face-api sidecar not installed")

// errClosed is returned by calls on a closed Pool.
var errClosed = errors.New("frs: pool closed")

// Distance returns the Euclidean distance ‖a − b‖₂ between two descriptors,
// the FRS's match score (smaller is more similar). It panics if the lengths
// differ, which is a programming error.
func Distance(a, b []float64) float64 {
	if len(a) != len(b) {
		panic(fmt.Sprintf("frs.Distance: lengths %d and %d differ", len(a), len(b)))
	}
	var s float64
	for i := range a {
		d := a[i] - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}

// checkDescriptor reports a descriptor of the wrong length or with a
// non-finite value.
func checkDescriptor(d []float64) error {
	if len(d) != DescriptorLen {
		return fmt.Errorf("descriptor has %d values, want %d", len(d), DescriptorLen)
	}
	for i, v := range d {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("descriptor value %d is %v", i, v)
		}
	}
	return nil
}

// checkLandmarks reports a landmark set of the wrong length or with a
// non-finite coordinate.
func checkLandmarks(lm []Point) error {
	if len(lm) != NumLandmarks {
		return fmt.Errorf("got %d landmarks, want %d", len(lm), NumLandmarks)
	}
	for i, p := range lm {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return fmt.Errorf("landmark %d is (%v, %v)", i, p.X, p.Y)
		}
	}
	return nil
}
