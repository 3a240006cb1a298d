package synth

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/plugins/facerec/internal/facetest"
)

// pose maps the unit mean face to pixels: scale, rotation (radians), centre.
type pose struct{ scale, angle, cx, cy float64 }

func (p pose) apply(u, w float64) Point {
	s, c := math.Sincos(p.angle)
	x, y := (u-0.5)*p.scale, (w-0.5)*p.scale
	return Point{X: p.cx + c*x - s*y, Y: p.cy + s*x + c*y}
}

func testLandmarks(p pose) []Point {
	lm := make([]Point, numLandmarks)
	for i, u := range facetest.UnitLandmarks() {
		lm[i] = p.apply(u[0], u[1])
	}
	return lm
}

// testImage is a deterministic textured image (smooth gradients plus hashed
// per-pixel noise), so that warps and blends visibly change pixels.
func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := uint32(x*73856093^y*19349663) * 2654435761
			o := img.PixOffset(x, y)
			img.Pix[o] = uint8(120 + 60*math.Sin(float64(x)/23) + float64(n>>28))
			img.Pix[o+1] = uint8(110 + 50*math.Cos(float64(y)/17) + float64((n>>20)&15))
			img.Pix[o+2] = uint8(90 + float64(x+y)/12 + float64((n>>12)&15))
			img.Pix[o+3] = 255
		}
	}
	return img
}

var (
	frontal = pose{scale: 200, angle: 0, cx: 200, cy: 230}
	tilted  = pose{scale: 290, angle: 0.35, cx: 330, cy: 330}
)

func newTestSynth(t testing.TB, p pose, w, h int) (*Synthesizer, *image.RGBA) {
	t.Helper()
	img := testImage(w, h)
	s, err := New(img, testLandmarks(p))
	if err != nil {
		t.Fatal(err)
	}
	return s, img
}

// single returns Params with only edit e switched on at strength v.
func single(e edit, v float64) Params {
	var p Params
	switch e {
	case beard:
		p.Beard = v
	case mustache:
		p.Mustache = v
	case foreheadScar:
		p.ForeheadScar = v
	case cheekScar:
		p.CheekScar = v
	case moleEdit:
		p.Mole = v
	case glassesEdit:
		if v >= 0.5 {
			p.GlassesRound = v
		}
	case smileEdit:
		p.Smile = v
	}
	return p
}

// changed returns the changed pixels of b relative to a and their centroid.
func changed(a, b *image.RGBA) (pts []image.Point, cx, cy float64) {
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			o := a.PixOffset(x, y)
			if a.Pix[o] != b.Pix[o] || a.Pix[o+1] != b.Pix[o+1] || a.Pix[o+2] != b.Pix[o+2] {
				pts = append(pts, image.Pt(x, y))
				cx += float64(x)
				cy += float64(y)
			}
		}
	}
	if len(pts) > 0 {
		cx /= float64(len(pts))
		cy /= float64(len(pts))
	}
	return pts, cx, cy
}

func TestOffLeavesImageUnchanged(t *testing.T) {
	s, img := newTestSynth(t, frontal, 400, 480)
	for _, p := range []Params{{}, {GlassesSquare: 0.49, GlassesRound: 0.3}} {
		out, err := s.Render(p)
		if err != nil {
			t.Fatal(err)
		}
		if pts, _, _ := changed(img, out); len(pts) != 0 {
			t.Errorf("Render(%+v) changed %d pixels, want 0", p, len(pts))
		}
	}
}

func TestEachEditStaysInItsRegion(t *testing.T) {
	for _, ps := range []struct {
		name string
		p    pose
		w, h int
	}{{"frontal", frontal, 400, 480}, {"tilted", tilted, 640, 640}} {
		s, img := newTestSynth(t, ps.p, ps.w, ps.h)
		lmBox := boundsOf(0, func() []vec {
			var out []vec
			for _, q := range testLandmarks(ps.p) {
				out = append(out, v(q))
			}
			return out
		}()...)
		face := lmBox.Inset(-int(0.6 * s.interOcular()))
		for _, c := range regionCases() {
			out, err := s.Render(c.p)
			if err != nil {
				t.Fatal(err)
			}
			pts, _, _ := changed(img, out)
			if len(pts) == 0 {
				t.Errorf("%s: %s changed no pixel", ps.name, c.name)
				continue
			}
			reg := s.region(c.e)
			outside := 0
			for _, q := range pts {
				if !q.In(reg) {
					outside++
				}
			}
			if outside > 0 {
				t.Errorf("%s: %s changed %d of %d pixels outside its region %v", ps.name, c.name, outside, len(pts), reg)
			}
			if !reg.In(face) {
				t.Errorf("%s: %v region %v is not on the face %v", ps.name, c.e, reg, face)
			}
		}
		// The two glasses styles are different drawings, not one style twice.
		sq, _ := s.Render(Params{GlassesSquare: 1})
		rd, _ := s.Render(Params{GlassesRound: 1})
		if pts, _, _ := changed(sq, rd); len(pts) == 0 {
			t.Errorf("%s: squared and round glasses give the same pixels", ps.name)
		}
	}
}

// regionCase is one edit at one strength; both glasses styles are cases
// of the Glasses edit.
type regionCase struct {
	name string
	e    edit
	p    Params
}

func regionCases() []regionCase {
	var out []regionCase
	for _, e := range edits {
		for _, v := range []float64{0.3, 1} {
			if e != glassesEdit {
				out = append(out, regionCase{fmt.Sprintf("%v at %.1f", e, v), e, single(e, v)})
				continue
			}
			if v < 0.5 {
				continue // below 0.5 both glasses parameters mean "no glasses"
			}
			out = append(out,
				regionCase{fmt.Sprintf("squared glasses at %.1f", v), e, Params{GlassesSquare: v}},
				regionCase{fmt.Sprintf("round glasses at %.1f", v), e, Params{GlassesRound: v}})
		}
	}
	return out
}

// TestPlacementFollowsLandmarks moves, scales and rotates the face and
// checks that each edit's changed pixels move with it: the centroid of the
// changes on the tilted face is the frontal centroid mapped through the same
// similarity transform, to within a few percent of the eye distance.
func TestPlacementFollowsLandmarks(t *testing.T) {
	sa, ia := newTestSynth(t, frontal, 400, 480)
	sb, ib := newTestSynth(t, tilted, 640, 640)
	mapAB := func(x, y float64) (float64, float64) {
		// Invert frontal's pose to unit coords, then apply tilted's.
		u := (x-frontal.cx)/frontal.scale + 0.5
		w := (y-frontal.cy)/frontal.scale + 0.5
		q := tilted.apply(u, w)
		return q.X, q.Y
	}
	for _, e := range edits {
		oa, _ := sa.Render(single(e, 1))
		ob, _ := sb.Render(single(e, 1))
		_, ax, ay := changed(ia, oa)
		_, bx, by := changed(ib, ob)
		wx, wy := mapAB(ax, ay)
		if d := math.Hypot(bx-wx, by-wy); d > 0.06*sb.interOcular() {
			t.Errorf("%v: changes centred at (%.1f, %.1f) on the tilted face, want (%.1f, %.1f) (off by %.1f px, eye distance %.0f)",
				e, bx, by, wx, wy, d, sb.interOcular())
		}
	}
}

func TestStrengthIsMonotone(t *testing.T) {
	s, img := newTestSynth(t, frontal, 400, 480)
	for _, e := range []edit{beard, mustache, foreheadScar, cheekScar, moleEdit} {
		prev := -1.0
		for _, v := range []float64{0.1, 0.4, 0.7, 1} {
			out, _ := s.Render(single(e, v))
			var sum float64
			for i := range out.Pix {
				sum += math.Abs(float64(out.Pix[i]) - float64(img.Pix[i]))
			}
			if sum <= prev {
				t.Errorf("%v: total change %.0f at strength %.1f is not above %.0f at the previous strength", e, sum, v, prev)
			}
			prev = sum
		}
	}
}

func TestDeterministic(t *testing.T) {
	p := Params{Beard: 0.6, Mustache: 0.4, ForeheadScar: 0.7, CheekScar: 0.2, Mole: 0.9, GlassesSquare: 0.8, Smile: 0.5}
	s1, _ := newTestSynth(t, tilted, 640, 640)
	s2, _ := newTestSynth(t, tilted, 640, 640)
	a, _ := s1.Render(p)
	b, _ := s1.Render(p)
	c, _ := s2.Render(p)
	if string(a.Pix) != string(b.Pix) || string(a.Pix) != string(c.Pix) {
		t.Fatal("same image, landmarks and parameters gave different pixels")
	}
}

func TestOutOfBoundsRejected(t *testing.T) {
	s, _ := newTestSynth(t, frontal, 400, 480)
	for _, tc := range []struct {
		p    Params
		name string
	}{
		{Params{Beard: -0.01}, "beard"},
		{Params{Smile: 1.2}, "smile"},
		{Params{GlassesRound: math.NaN()}, "glasses_round"},
	} {
		_, err := s.Render(tc.p)
		if err == nil || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), "[0, 1]") {
			t.Errorf("Render(%+v) error = %v, want one naming %s and its bounds", tc.p, err, tc.name)
		}
	}
	if _, err := FromVector([]float64{0, 0, 0}); err == nil {
		t.Error("FromVector accepted 3 values")
	}
	if _, err := FromVector([]float64{0, 0, 0, 0, 0, 0, 0, 2}); err == nil || !strings.Contains(err.Error(), "smile") {
		t.Errorf("FromVector(smile=2) error = %v", err)
	}
	if _, err := New(testImage(50, 50), testLandmarks(frontal)[:60]); err == nil {
		t.Error("New accepted 60 landmarks")
	}
}

func TestGlassesSnapping(t *testing.T) {
	for _, tc := range []struct {
		sq, rd float64
		want   GlassesStyle
	}{
		{0, 0, noGlasses}, {0.49, 0.49, noGlasses}, {0.5, 0, squaredGlasses}, {0.9, 0.6, squaredGlasses},
		{0.7, 0.7, squaredGlasses}, {0.2, 0.5, roundGlasses}, {0.6, 0.61, roundGlasses},
	} {
		if got := (Params{GlassesSquare: tc.sq, GlassesRound: tc.rd}).Glasses(); got != tc.want {
			t.Errorf("Glasses(%v, %v) = %v, want %v", tc.sq, tc.rd, got, tc.want)
		}
	}
}

func TestSubImageCoordinates(t *testing.T) {
	// A face in a sub-image keeps the parent's coordinates: edits land on
	// the same pixels as in the full image.
	full := testImage(640, 640)
	crop := full.SubImage(image.Rect(100, 80, 600, 620)).(*image.RGBA)
	lm := testLandmarks(tilted)
	sf, _ := New(full, lm)
	sc, _ := New(crop, lm)
	p := Params{Mole: 1, CheekScar: 0.8, GlassesSquare: 1}
	a, _ := sf.Render(p)
	b, _ := sc.Render(p)
	if b.Bounds() != crop.Bounds() {
		t.Fatalf("bounds %v, want %v", b.Bounds(), crop.Bounds())
	}
	for y := b.Rect.Min.Y; y < b.Rect.Max.Y; y++ {
		for x := b.Rect.Min.X; x < b.Rect.Max.X; x++ {
			if a.RGBAAt(x, y) != b.RGBAAt(x, y) {
				t.Fatalf("pixel (%d,%d) differs between full image and crop", x, y)
			}
		}
	}
}

// TestFigure: the saved PNG has the layout's size; each panel shows its
// image (the scaled original has the original's mean colour, the edited
// panel differs from it), a nil image is the grey placeholder, and the
// captions and title are drawn.
func TestFigure(t *testing.T) {
	s, img := newTestSynth(t, frontal, 400, 480)
	out, _ := s.Render(Params{Beard: 1, GlassesRound: 1})
	path := filepath.Join(t.TempDir(), "sub", "fig.png")
	panels := []Panel{{img, []string{"original"}}, {out, []string{"synthesized", "d = 0.45"}},
		{nil, []string{"gallery #3 (descriptor only)"}}}
	if err := SaveFigure(path, "attack", panels...); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fig, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	l := FigureLayout("attack", panels...)
	if fig.Bounds() != (image.Rectangle{Max: l.Size}) || len(l.Images) != 3 {
		t.Fatalf("figure %v, layout %+v", fig.Bounds(), l)
	}
	wantW := FigureHeight * 400 / 480
	for i, r := range l.Images[:2] {
		if r.Dy() != FigureHeight || r.Dx() != wantW {
			t.Errorf("panel %d: image at %v, want %d×%d", i, r, wantW, FigureHeight)
		}
	}
	for i := 1; i < 3; i++ {
		if l.Images[i].Min.X < l.Images[i-1].Max.X {
			t.Errorf("panels %d and %d overlap: %v %v", i-1, i, l.Images[i-1], l.Images[i])
		}
	}
	// Panel 0 is the original, scaled: same mean colour.
	if got, want := facetest.MeanRGB(fig, l.Images[0]), facetest.MeanRGB(img, img.Bounds()); facetest.MaxAbsDiff(got, want) > 2 {
		t.Errorf("panel 0 mean colour %v, the original's %v", got, want)
	}
	// Panel 1 is the edited face: it differs from panel 0 pixel by pixel.
	diff, n := 0, 0
	r0, r1 := l.Images[0], l.Images[1]
	for y := 0; y < r0.Dy(); y++ {
		for x := 0; x < r0.Dx(); x++ {
			n++
			if fig.At(r0.Min.X+x, r0.Min.Y+y) != fig.At(r1.Min.X+x, r1.Min.Y+y) {
				diff++
			}
		}
	}
	if diff < n/50 {
		t.Errorf("edited panel differs from the original panel in %d of %d pixels", diff, n)
	}
	// Panel 2 (nil image) is the grey placeholder, apart from its label.
	grey := 0
	r2 := l.Images[2]
	for y := r2.Min.Y; y < r2.Max.Y; y++ {
		for x := r2.Min.X; x < r2.Max.X; x++ {
			if color.GrayModel.Convert(fig.At(x, y)).(color.Gray) == PlaceholderGrey {
				grey++
			}
		}
	}
	if area := r2.Dx() * r2.Dy(); grey < area*95/100 {
		t.Errorf("placeholder panel: %d of %d pixels grey", grey, area)
	}
	// Title and captions are drawn in black on white.
	if !hasDark(fig, image.Rect(0, 0, l.Size.X, r0.Min.Y)) {
		t.Error("no title text above the panels")
	}
	if !hasDark(fig, image.Rect(0, r0.Max.Y, l.Size.X, l.Size.Y)) {
		t.Error("no caption text below the panels")
	}
}

func hasDark(img image.Image, r image.Rectangle) bool {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if color.GrayModel.Convert(img.At(x, y)).(color.Gray).Y < 64 {
				return true
			}
		}
	}
	return false
}

func BenchmarkRender(b *testing.B) {
	s, _ := newTestSynth(b, frontal, 400, 480)
	p := Params{Beard: 0.8, Mustache: 0.8, ForeheadScar: 0.5, CheekScar: 0.5, Mole: 0.5, GlassesRound: 1, Smile: 0.7}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Render(p); err != nil {
			b.Fatal(err)
		}
	}
}
