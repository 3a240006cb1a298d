package synth

import (
	"image"
	"math"
	"math/rand/v2"
)

// edit names one facial region an edit draws in.
type edit int

const (
	beard edit = iota
	mustache
	foreheadScar
	cheekScar
	moleEdit
	glassesEdit
	smileEdit
	numEdits
)

// String returns the edit's name.
func (e edit) String() string {
	return [...]string{"beard", "mustache", "forehead_scar", "cheek_scar", "mole", "glasses", "smile"}[e]
}

// edits lists all edits in rendering order after Smile (which warps first).
var edits = []edit{beard, mustache, foreheadScar, cheekScar, moleEdit, glassesEdit, smileEdit}

var (
	hairColor  = rgb{38, 28, 22}
	scarColor  = rgb{165, 78, 76}
	scarLight  = rgb{226, 168, 156}
	stitchCol  = rgb{110, 52, 50}
	moleColor  = rgb{58, 36, 28}
	frameColor = rgb{18, 18, 20}
	lensColor  = rgb{40, 44, 56}
)

// ---------------------------------------------------------------------------
// Hair (beard, mustache): shading under a feathered polygon plus strands.
// Strand i is drawn when its fixed key is below the strength, so a stronger
// beard is the weaker one plus more hair (monotone, nearly continuous).

type strand struct {
	a, b  vec
	key   float64 // drawn when key < strength
	width float64
	tone  float64 // brightness multiplier of hairColor
	alpha float64
}

type hairPatch struct {
	poly    polygon
	feather float64
	mask    []float32 // coverage of poly over region, feathered
	region  image.Rectangle
	strands []strand
	shade   float64 // max shading opacity at strength 1
}

// newHairPatch samples strands uniformly (in face units, so the count does
// not depend on image resolution) inside poly; dir gives each strand's
// direction from its root.
func newHairPatch(f frame, poly polygon, seed uint64, density, length, shade float64, dir func(root vec, r *rand.Rand) vec) *hairPatch {
	h := &hairPatch{poly: poly, feather: 0.05 * f.iod, shade: shade}
	maxLen := 1.3 * length * f.iod
	h.region = boundsOf(h.feather+maxLen+2, poly...)
	rr := h.region
	h.mask = make([]float32, rr.Dx()*rr.Dy())
	for y := rr.Min.Y; y < rr.Max.Y; y++ {
		for x := rr.Min.X; x < rr.Max.X; x++ {
			d := poly.sdf(vec{float64(x), float64(y)})
			// Fully inside at d ≤ -feather, zero at d ≥ 0.
			h.mask[(y-rr.Min.Y)*rr.Dx()+(x-rr.Min.X)] = float32(smoothstep(0, 1, -d/h.feather))
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x7e5b0))
	pb := boundsOf(0, poly...)
	area := polyArea(poly) / (f.iod * f.iod)
	n := int(density * area)
	w := math.Max(0.7, 0.011*f.iod)
	for len(h.strands) < n {
		root := vec{float64(pb.Min.X) + rng.Float64()*float64(pb.Dx()), float64(pb.Min.Y) + rng.Float64()*float64(pb.Dy())}
		m := h.maskAt(root)
		key, l, tone, al := rng.Float64(), (0.6+0.7*rng.Float64())*length*f.iod, 0.6+0.8*rng.Float64(), 0.45+0.4*rng.Float64()
		d := dir(root, rng)
		if m < 0.5 {
			continue // reject roots outside the (feathered) patch
		}
		h.strands = append(h.strands, strand{a: root, b: root.add(d.mul(l)), key: key, width: w, tone: tone, alpha: al * m})
	}
	return h
}

func (h *hairPatch) maskAt(p vec) float64 {
	x, y := int(math.Round(p.x)), int(math.Round(p.y))
	if !(image.Point{x, y}).In(h.region) {
		return 0
	}
	return float64(h.mask[(y-h.region.Min.Y)*h.region.Dx()+(x-h.region.Min.X)])
}

func (h *hairPatch) render(c *canvas, s float64) {
	if s <= 0 {
		return
	}
	rr := h.region.Intersect(c.r)
	a := h.shade * s
	for y := rr.Min.Y; y < rr.Max.Y; y++ {
		for x := rr.Min.X; x < rr.Max.X; x++ {
			if m := h.mask[(y-h.region.Min.Y)*h.region.Dx()+(x-h.region.Min.X)]; m > 0 {
				c.blend(x, y, hairColor, a*float64(m))
			}
		}
	}
	taper := func(t float64) float64 { return 1 - t*t }
	for _, st := range h.strands {
		if st.key >= s {
			continue
		}
		col := rgb{hairColor[0] * st.tone, hairColor[1] * st.tone, hairColor[2] * st.tone}
		c.strokeSegment(st.a, st.b, st.width, col, st.alpha, taper)
	}
}

func polyArea(pg polygon) float64 {
	var a float64
	for i := range pg {
		p, q := pg[i], pg[(i+1)%len(pg)]
		a += p.x*q.y - q.x*p.y
	}
	return math.Abs(a) / 2
}

func newBeard(f frame) *hairPatch {
	lm := f.lm
	// Jaw 2..14 below, then a line under the lower lip joining the cheeks.
	var poly polygon
	for i := 2; i <= 14; i++ {
		poly = append(poly, lm[i])
	}
	poly = append(poly, lerp(lm[14], lm[54], 0.45))
	for _, i := range []int{55, 56, 57, 58, 59} {
		poly = append(poly, f.off(lm[i], 0, 0.07))
	}
	poly = append(poly, lerp(lm[2], lm[48], 0.45))
	chin := lm[8]
	return newHairPatch(f, poly, 1, 700, 0.07, 0.5, func(root vec, r *rand.Rand) vec {
		// Hair grows down and slightly towards the chin.
		toward := chin.sub(root)
		d := f.ey.mul(1).add(toward.mul(0.3 / math.Max(toward.norm(), 1)))
		return d.unit().rot((r.Float64() - 0.5) * 0.9)
	})
}

func newMustache(f frame) *hairPatch {
	lm := f.lm
	var poly polygon
	poly = append(poly, f.off(lm[48], -0.08, 0.04))
	for _, i := range []int{49, 50, 51, 52, 53} {
		poly = append(poly, f.off(lm[i], 0, -0.015))
	}
	poly = append(poly, f.off(lm[54], 0.08, 0.04))
	for _, i := range []int{35, 34, 33, 32, 31} {
		poly = append(poly, f.off(lm[i], 0, 0.035))
	}
	mid := lm[51]
	return newHairPatch(f, poly, 2, 1100, 0.06, 0.55, func(root vec, r *rand.Rand) vec {
		// Down and outward from the philtrum.
		side := root.sub(mid).dot(f.ex) / f.iod
		return f.ey.add(f.ex.mul(2 * side)).unit().rot((r.Float64() - 0.5) * 0.5)
	})
}

// ---------------------------------------------------------------------------
// Scars: a tapered reddish line with a light core and stitch marks. The
// visible length grows from 35% to 100% and the opacity from 0 to 0.85 with
// the strength.

type scar struct {
	c, d   vec // centre, unit direction
	length float64
	width  float64
	stitch float64 // stitch spacing
	iod    float64
	region image.Rectangle
}

func newScar(f frame, c vec, angle, length float64) *scar {
	d := f.ex.rot(angle)
	s := &scar{c: c, d: d, length: length * f.iod, width: 0.035 * f.iod, stitch: 0.07 * f.iod, iod: f.iod}
	half := d.mul(s.length / 2)
	s.region = boundsOf(0.06*f.iod+2, c.sub(half), c.add(half))
	return s
}

func (s *scar) render(c *canvas, strength float64) {
	if strength <= 0 {
		return
	}
	l := s.length * (0.35 + 0.65*strength)
	a, b := s.c.sub(s.d.mul(l/2)), s.c.add(s.d.mul(l/2))
	alpha := 0.85 * strength
	taper := func(t float64) float64 { u := 2*t - 1; return 1 - u*u*u*u }
	c.strokeSegment(a, b, s.width, scarColor, alpha, taper)
	c.strokeSegment(a, b, s.width*0.35, scarLight, 0.6*alpha, taper)
	n := int(l / s.stitch)
	perp := vec{-s.d.y, s.d.x}
	for i := 1; i < n; i++ {
		t := float64(i) / float64(n)
		p := lerp(a, b, t)
		h := perp.mul(0.035 * s.iod)
		c.strokeSegment(p.sub(h), p.add(h), math.Max(0.7, 0.012*s.iod), stitchCol, 0.7*alpha*taper(t), nil)
	}
}

func newForeheadScar(f frame) *scar {
	// Above the image-left brow, slanting up towards the temple.
	brow := mean(f.lm[18], f.lm[19], f.lm[20])
	return newScar(f, f.off(brow, 0.05, -0.32), -0.45, 0.45)
}

func newCheekScar(f frame) *scar {
	// On the image-right cheek, between the outer eye corner, the mouth
	// corner and the jaw.
	c := mean(f.lm[46], f.lm[54], f.lm[13], f.lm[14])
	return newScar(f, f.off(c, -0.02, -0.05), 1.0, 0.4)
}

// ---------------------------------------------------------------------------
// Mole: a soft dark disc beside the image-left nostril; radius grows with
// the strength, opacity ramps up over the first third.

type mole struct {
	c      vec
	r0, r1 float64
	region image.Rectangle
}

func newMole(f frame) *mole {
	c := f.off(lerp(f.lm[31], f.lm[3], 0.38), 0, -0.06)
	m := &mole{c: c, r0: 0.015 * f.iod, r1: 0.05 * f.iod}
	m.region = boundsOf(m.r1+2, c)
	return m
}

func (m *mole) render(c *canvas, s float64) {
	if s <= 0 {
		return
	}
	r := m.r0 + (m.r1-m.r0)*s
	alpha := math.Min(1, 3*s)
	sdf := func(p vec) float64 { return p.sub(m.c).norm() - r }
	// Slightly darker centre, softer rim.
	shade := func(p vec) float64 { return 0.75 + 0.25*(1-clamp01(p.sub(m.c).norm()/r)) }
	c.fillSDF(m.region, sdf, moleColor, alpha, shade)
}

// ---------------------------------------------------------------------------
// Eyeglasses: dark frames around both eyes (rounded rectangles or circles),
// a bridge over the nose, temples towards the ears, faintly tinted lenses.

type glasses struct {
	eyes   [2]vec
	ex, ey vec
	iod    float64
	ears   [2]vec // jaw's top points (ear level), where the temples head
	region image.Rectangle
}

func newGlasses(f frame) *glasses {
	eyeL := mean(f.lm[36:42]...)
	eyeR := mean(f.lm[42:48]...)
	g := &glasses{eyes: [2]vec{f.off(eyeL, 0, 0.03), f.off(eyeR, 0, 0.03)}, ex: f.ex, ey: f.ey, iod: f.iod,
		ears: [2]vec{f.lm[0], f.lm[16]}}
	pts := []vec{f.off(g.eyes[0], -0.45, -0.35), f.off(g.eyes[1], 0.45, 0.35),
		f.off(g.eyes[0], -0.45, 0.35), f.off(g.eyes[1], 0.45, -0.35)}
	for _, st := range []GlassesStyle{squaredGlasses, roundGlasses} {
		for k := range g.eyes {
			a, b := g.temple(st, k)
			pts = append(pts, a, b)
		}
	}
	g.region = boundsOf(0.05*f.iod+2, pts...)
	return g
}

// halfWidth is the lens's half width across the face.
func (g *glasses) halfWidth(style GlassesStyle) float64 {
	if style == roundGlasses {
		return 0.3 * g.iod
	}
	return 0.4 * g.iod
}

// temple is the segment from lens k's outer edge towards the ear, stopping
// short of it.
func (g *glasses) temple(style GlassesStyle, k int) (vec, vec) {
	sign := -1.0
	if k == 1 {
		sign = 1
	}
	a := g.eyes[k].add(g.ex.mul(sign * g.halfWidth(style))).sub(g.ey.mul(0.05 * g.iod))
	return a, lerp(a, g.ears[k], 0.85)
}

// lensSDF is the signed distance to one lens outline centred at e.
func (g *glasses) lensSDF(style GlassesStyle, e vec) func(vec) float64 {
	hw, hh, rad := 0.4*g.iod, 0.25*g.iod, 0.07*g.iod // squared
	return func(p vec) float64 {
		q := p.sub(e)
		u, w := q.dot(g.ex), q.dot(g.ey)
		if style == roundGlasses {
			r := 0.3 * g.iod
			return math.Hypot(u, w*1.08) - r
		}
		dx, dy := math.Abs(u)-(hw-rad), math.Abs(w)-(hh-rad)
		out := math.Hypot(math.Max(dx, 0), math.Max(dy, 0))
		return out + math.Min(math.Max(dx, dy), 0) - rad
	}
}

func (g *glasses) render(c *canvas, style GlassesStyle) {
	if style == noGlasses {
		return
	}
	t := math.Max(1, 0.04*g.iod)
	var inner [2]vec // frame points nearest the nose, for the bridge
	for k, e := range g.eyes {
		sdf := g.lensSDF(style, e)
		lr := boundsOf(0.45*g.iod, e)
		c.fillSDF(lr, sdf, lensColor, 0.1, nil)
		c.strokeSDF(lr, sdf, t, frameColor, 0.95)
		sign := 1.0
		if k == 1 {
			sign = -1
		}
		inner[k] = e.add(g.ex.mul(sign * g.halfWidth(style))).sub(g.ey.mul(0.05 * g.iod))
	}
	mid := lerp(inner[0], inner[1], 0.5).sub(g.ey.mul(0.04 * g.iod))
	c.strokeSegment(inner[0], mid, t, frameColor, 0.95, nil)
	c.strokeSegment(mid, inner[1], t, frameColor, 0.95, nil)
	for k := range g.eyes {
		a, b := g.temple(style, k)
		c.strokeSegment(a, b, t, frameColor, 0.9, nil)
	}
}

// ---------------------------------------------------------------------------
// Smile: a smooth local warp that moves each mouth corner up and outward by
// up to 0.09 inter-ocular distances. The displacement field has compact
// support (radius R around each corner, weight (1 − r²/R²)²), so pixels
// farther away are left bit-identical, and its Jacobian stays well away from
// singular (max |∇d| ≈ 0.4), so the backward mapping is a good inverse.

type smile struct {
	corners [2]vec
	dirs    [2]vec
	maxDisp float64
	radius  float64
	region  image.Rectangle
}

func newSmile(f frame) *smile {
	lm := f.lm
	m := mean(lm[48:60]...)
	s := &smile{maxDisp: 0.09 * f.iod, radius: 0.35 * f.iod}
	for k, i := range []int{48, 54} {
		c := lm[i]
		out := c.sub(m).unit()
		s.corners[k] = c
		s.dirs[k] = out.mul(0.6).sub(f.ey).unit()
	}
	s.region = boundsOf(s.radius+1, s.corners[0], s.corners[1])
	return s
}

func (s *smile) render(dst, src *canvas, strength float64) {
	if strength <= 0 {
		return
	}
	r := s.region.Intersect(dst.r)
	R2 := s.radius * s.radius
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := vec{float64(x), float64(y)}
			var disp vec
			for k := range s.corners {
				d2 := p.sub(s.corners[k]).dot(p.sub(s.corners[k]))
				if d2 >= R2 {
					continue
				}
				w := 1 - d2/R2
				disp = disp.add(s.dirs[k].mul(strength * s.maxDisp * w * w))
			}
			if disp.x == 0 && disp.y == 0 {
				continue
			}
			q := p.sub(disp)
			col := src.sample(q.x, q.y)
			o := dst.off(x, y)
			dst.pix[o], dst.pix[o+1], dst.pix[o+2] = float32(col[0]), float32(col[1]), float32(col[2])
		}
	}
}
