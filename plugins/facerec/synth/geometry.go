package synth

import (
	"image"
	"math"
)

// Point is a position in image pixels (x right, y down), the same layout as
// frs.Point so that slices convert element by element.
type Point struct{ X, Y float64 }

// vec is a 2-d vector for the geometry below.
type vec struct{ x, y float64 }

func v(p Point) vec                { return vec{p.X, p.Y} }
func (a vec) add(b vec) vec        { return vec{a.x + b.x, a.y + b.y} }
func (a vec) sub(b vec) vec        { return vec{a.x - b.x, a.y - b.y} }
func (a vec) mul(s float64) vec    { return vec{a.x * s, a.y * s} }
func (a vec) dot(b vec) float64    { return a.x*b.x + a.y*b.y }
func (a vec) norm() float64        { return math.Hypot(a.x, a.y) }
func (a vec) unit() vec            { return a.mul(1 / a.norm()) }
func lerp(a, b vec, t float64) vec { return a.add(b.sub(a).mul(t)) }
func (a vec) rot(theta float64) vec {
	s, c := math.Sincos(theta)
	return vec{c*a.x - s*a.y, s*a.x + c*a.y}
}
func mean(pts ...vec) vec {
	var m vec
	for _, p := range pts {
		m = m.add(p)
	}
	return m.mul(1 / float64(len(pts)))
}
func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }
func smoothstep(e0, e1, x float64) float64 {
	t := clamp01((x - e0) / (e1 - e0))
	return t * t * (3 - 2*t)
}

// frame is a face-attached coordinate system: origin between the eye
// centres, ex across the face (towards the image-right eye), ey down the
// face, unit = inter-ocular distance. Edits are placed in it so that they
// follow the face's position, size and in-plane rotation.
type frame struct {
	o, ex, ey vec
	iod       float64
	lm        []vec
}

func newFrame(lm []vec) frame {
	eyeL := mean(lm[36:42]...) // image-left eye (the subject's right)
	eyeR := mean(lm[42:48]...)
	d := eyeR.sub(eyeL)
	iod := d.norm()
	ex := d.mul(1 / iod)
	return frame{o: lerp(eyeL, eyeR, 0.5), ex: ex, ey: vec{-ex.y, ex.x}, iod: iod, lm: lm}
}

// off moves p by (u, w) inter-ocular units along the face axes.
func (f frame) off(p vec, u, w float64) vec {
	return p.add(f.ex.mul(u * f.iod)).add(f.ey.mul(w * f.iod))
}

// segDist is the distance from p to the segment ab and the position t ∈ [0,1]
// of the closest point along it.
func segDist(p, a, b vec) (float64, float64) {
	ab := b.sub(a)
	l2 := ab.dot(ab)
	t := 0.0
	if l2 > 0 {
		t = clamp01(p.sub(a).dot(ab) / l2)
	}
	return p.sub(a.add(ab.mul(t))).norm(), t
}

// polygon is a closed simple polygon in pixels.
type polygon []vec

// sdf is the signed distance to the boundary (negative inside).
func (pg polygon) sdf(p vec) float64 {
	d := math.Inf(1)
	inside := false
	for i := range pg {
		a, b := pg[i], pg[(i+1)%len(pg)]
		if dd, _ := segDist(p, a, b); dd < d {
			d = dd
		}
		if (a.y > p.y) != (b.y > p.y) && p.x < a.x+(p.y-a.y)*(b.x-a.x)/(b.y-a.y) {
			inside = !inside
		}
	}
	if inside {
		return -d
	}
	return d
}

// rect is an axis-aligned integer rectangle grown from points.
func boundsOf(margin float64, pts ...vec) image.Rectangle {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range pts {
		x0, y0 = math.Min(x0, p.x), math.Min(y0, p.y)
		x1, y1 = math.Max(x1, p.x), math.Max(y1, p.y)
	}
	return image.Rect(int(math.Floor(x0-margin)), int(math.Floor(y0-margin)),
		int(math.Ceil(x1+margin))+1, int(math.Ceil(y1+margin))+1)
}
