package synth

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// numLandmarks is the number of face landmarks Synthesizer needs (68-point
// iBUG/dlib scheme).
const numLandmarks = 68

// Synthesizer renders edits of one face. All placement work (polygons, hair
// strands, masks) is done once in New; Render is then cheap and safe for
// concurrent use.
type Synthesizer struct {
	base     *canvas
	bounds   image.Rectangle
	frame    frame
	beard    *hairPatch
	mustache *hairPatch
	forehead *scar
	cheek    *scar
	mole     *mole
	glasses  *glasses
	smile    *smile
}

// New prepares edits of the face with the given 68 landmarks (pixel
// coordinates in img's coordinate system) in img.
func New(img image.Image, landmarks []Point) (*Synthesizer, error) {
	if len(landmarks) != numLandmarks {
		return nil, fmt.Errorf("synth: got %d landmarks, want %d", len(landmarks), numLandmarks)
	}
	lm := make([]vec, len(landmarks))
	for i, p := range landmarks {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
			return nil, fmt.Errorf("synth: landmark %d is (%v, %v)", i, p.X, p.Y)
		}
		lm[i] = v(p)
	}
	if img.Bounds().Empty() {
		return nil, errors.New("synth: empty image")
	}
	f := newFrame(lm)
	if !(f.iod >= 4) {
		return nil, fmt.Errorf("synth: eyes %.1f px apart; the face is too small (or the landmarks are wrong) to edit", f.iod)
	}
	return &Synthesizer{
		base:     newCanvas(img),
		bounds:   img.Bounds(),
		frame:    f,
		beard:    newBeard(f),
		mustache: newMustache(f),
		forehead: newForeheadScar(f),
		cheek:    newCheekScar(f),
		mole:     newMole(f),
		glasses:  newGlasses(f),
		smile:    newSmile(f),
	}, nil
}

// Render returns the edited face: smile warp first, then beard, mustache,
// scars, mole and eyeglasses on top. Parameters outside [0, 1] are rejected.
// Params{} returns a copy of the original image.
func (s *Synthesizer) Render(p Params) (*image.RGBA, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	c := s.base.clone()
	s.smile.render(c, s.base, p.Smile)
	s.beard.render(c, p.Beard)
	s.mustache.render(c, p.Mustache)
	s.forehead.render(c, p.ForeheadScar)
	s.cheek.render(c, p.CheekScar)
	s.mole.render(c, p.Mole)
	s.glasses.render(c, p.Glasses())
	return c.image(), nil
}

// region returns the rectangle (in image coordinates, clipped to the image)
// outside which edit e never changes a pixel.
func (s *Synthesizer) region(e edit) image.Rectangle {
	var r image.Rectangle
	switch e {
	case beard:
		r = s.beard.region
	case mustache:
		r = s.mustache.region
	case foreheadScar:
		r = s.forehead.region
	case cheekScar:
		r = s.cheek.region
	case moleEdit:
		r = s.mole.region
	case glassesEdit:
		r = s.glasses.region
	case smileEdit:
		r = s.smile.region
	}
	return r.Intersect(s.bounds)
}

// interOcular returns the distance between the eye centres in pixels, the
// unit all edit sizes are expressed in.
func (s *Synthesizer) interOcular() float64 { return s.frame.iod }
