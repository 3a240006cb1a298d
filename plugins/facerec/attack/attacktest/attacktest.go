// Package attacktest provides an in-process fake FRS and a synthetic
// attacker photo with a descriptor gallery, so that the attack objective and
// the reproduction tools can be tested without node or the face-api
// sidecar.
package attacktest

import (
	"context"
	"image"
	"math"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/tesbo/tesbo/plugins/facerec/frs"
	"github.com/tesbo/tesbo/plugins/facerec/synth"

	"github.com/tesbo/tesbo/plugins/facerec/internal/facetest"
)

// FRS is a fake frs.FRS: it "detects" one face with fixed landmarks and
// describes a face by the mean colours of a 6×6 grid over the landmarks'
// box, so edits move the descriptor.
type FRS struct {
	landmarks []frs.Point
	photo     *image.RGBA
	// NoFaces makes Analyze find no face (as if the edits hid it).
	NoFaces atomic.Bool
	// HideEdited makes Analyze find no face in any image other than the
	// unedited Photo, so that set-up succeeds and re-checks fail.
	HideEdited atomic.Bool
	// Analyzes and Describes count the calls.
	Analyzes  atomic.Int64
	Describes atomic.Int64
	// detectShift (float64 bits) is added to coordinate 0 of every
	// descriptor Analyze returns: full detection then disagrees with the
	// landmarks-mode descriptor by exactly that distance, as the real FRS
	// does by a few hundredths (a different alignment of the same face).
	detectShift atomic.Uint64
}

// SetDetectShift makes Analyze's descriptors lie s away from Describe's.
func (f *FRS) SetDetectShift(s float64) { f.detectShift.Store(math.Float64bits(s)) }

// Analyze implements frs.FRS.
func (f *FRS) Analyze(_ context.Context, img image.Image, o frs.AnalyzeOptions) ([]frs.Face, error) {
	f.Analyzes.Add(1)
	if f.NoFaces.Load() || (f.HideEdited.Load() && !f.isPhoto(img)) {
		return nil, nil
	}
	face := frs.Face{Box: frs.Box{X: 80, Y: 120, W: 240, H: 260}, Score: 0.99, Landmarks: append([]frs.Point(nil), f.landmarks...)}
	if !o.NoDescriptor {
		face.Descriptor = f.Descriptor(img)
		face.Descriptor[0] += math.Float64frombits(f.detectShift.Load())
	}
	return []frs.Face{face}, nil
}

// isPhoto reports whether img has the unedited Photo's pixels.
func (f *FRS) isPhoto(img image.Image) bool {
	if img.Bounds() != f.photo.Bounds() {
		return false
	}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.At(x, y) != f.photo.RGBAAt(x, y) {
				return false
			}
		}
	}
	return true
}

// Describe implements frs.FRS (the landmarks are ignored: they are always
// the fake face's).
func (f *FRS) Describe(_ context.Context, img image.Image, lm []frs.Point) ([]float64, error) {
	f.Describes.Add(1)
	return f.Descriptor(img), nil
}

// Close implements frs.FRS.
func (f *FRS) Close() error { return nil }

// Descriptor is the fake descriptor of img: twice the mean R, G, B (in
// [0, 1]) of each cell of a 6×6 grid over the landmarks' bounding box,
// zero-padded to frs.DescriptorLen.
func (f *FRS) Descriptor(img image.Image) []float64 {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range f.landmarks {
		x0, y0, x1, y1 = math.Min(x0, p.X), math.Min(y0, p.Y), math.Max(x1, p.X), math.Max(y1, p.Y)
	}
	d := make([]float64, frs.DescriptorLen)
	const g = 6
	for gy := 0; gy < g; gy++ {
		for gx := 0; gx < g; gx++ {
			var sum [3]float64
			n := 0.0
			for y := int(y0 + (y1-y0)*float64(gy)/g); y < int(y0+(y1-y0)*float64(gy+1)/g); y++ {
				for x := int(x0 + (x1-x0)*float64(gx)/g); x < int(x0+(x1-x0)*float64(gx+1)/g); x++ {
					r, gg, b, _ := img.At(x, y).RGBA()
					sum[0] += float64(r>>8) / 255
					sum[1] += float64(gg>>8) / 255
					sum[2] += float64(b>>8) / 255
					n++
				}
			}
			for k := 0; k < 3; k++ {
				d[3*(gy*g+gx)+k] = 2 * sum[k] / math.Max(n, 1)
			}
		}
	}
	return d
}

// landmarks returns the 68 landmarks of a frontal face of 200 px centred
// at (200, 230). In the 400×470 Photo, the attacker crop (landmark box plus
// margins) covers the whole photo, so the crop's coordinates are the
// photo's and one landmark set serves both.
func landmarks() []frs.Point {
	lm := make([]frs.Point, frs.NumLandmarks)
	at := func(u, w float64) frs.Point { return frs.Point{X: 200 + (u-0.5)*200, Y: 230 + (w-0.5)*200} }
	for i, u := range facetest.UnitLandmarks() {
		lm[i] = at(u[0], u[1])
	}
	return lm
}

// photo is a smooth, textured 400×470 "photo".
func photo() *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 400, 470))
	for y := 0; y < 470; y++ {
		for x := 0; x < 400; x++ {
			o := img.PixOffset(x, y)
			img.Pix[o] = uint8(170 + 40*math.Sin(float64(x)/31))
			img.Pix[o+1] = uint8(130 + 30*math.Cos(float64(y)/23))
			img.Pix[o+2] = uint8(110 + float64((x*7+y*13)%17))
			img.Pix[o+3] = 255
		}
	}
	return img
}

// Files are the inputs Setup writes.
type Files struct {
	Dir      string // a fresh temporary directory holding them
	Attacker string // the Photo as PNG
	// Gallery is a .npy descriptor file: row 0 is the attacker with round
	// glasses (synth.Params{GlassesRound: 1}), row 1 the attacker with a
	// full beard (synth.Params{Beard: 1}), row 2 far away (all 3s).
	Gallery string
}

// Setup writes the fake attacker photo and gallery and returns them with
// a fresh fake FRS.
func Setup(t testing.TB) (Files, *FRS) {
	t.Helper()
	dir := t.TempDir()
	photo := photo()
	files := Files{Dir: dir, Attacker: filepath.Join(dir, "attacker.png"), Gallery: filepath.Join(dir, "gallery.npy")}
	if err := synth.SavePNG(files.Attacker, photo); err != nil {
		t.Fatal(err)
	}
	f := &FRS{landmarks: landmarks(), photo: photo}
	lm := make([]synth.Point, len(f.landmarks))
	for i, p := range f.landmarks {
		lm[i] = synth.Point(p)
	}
	s, err := synth.New(photo, lm)
	if err != nil {
		t.Fatal(err)
	}
	glasses, err := s.Render(synth.Params{GlassesRound: 1})
	if err != nil {
		t.Fatal(err)
	}
	beard, err := s.Render(synth.Params{Beard: 1})
	if err != nil {
		t.Fatal(err)
	}
	far := make([]float64, frs.DescriptorLen)
	for i := range far {
		far[i] = 3
	}
	if err := frs.WriteNPY(files.Gallery, [][]float64{f.Descriptor(glasses), f.Descriptor(beard), far}); err != nil {
		t.Fatal(err)
	}
	return files, f
}

var _ frs.FRS = (*FRS)(nil)
