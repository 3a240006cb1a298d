package synth

import (
	"image"
	"math"
)

// rgb is a colour with float channels in [0, 255].
type rgb [3]float64

// canvas is a float RGB working copy of the image, addressed in the source
// image's coordinates (bounds may not start at 0,0). Working in float and
// quantizing once keeps untouched pixels bit-identical to the input.
type canvas struct {
	r   image.Rectangle
	pix []float32 // 3 per pixel, row-major
}

func newCanvas(img image.Image) *canvas {
	r := img.Bounds()
	c := &canvas{r: r, pix: make([]float32, 3*r.Dx()*r.Dy())}
	switch m := img.(type) {
	case *image.RGBA:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			src := m.Pix[m.PixOffset(r.Min.X, y):]
			dst := c.pix[c.off(r.Min.X, y):]
			for x := 0; x < r.Dx(); x++ {
				dst[3*x], dst[3*x+1], dst[3*x+2] = float32(src[4*x]), float32(src[4*x+1]), float32(src[4*x+2])
			}
		}
	default:
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				cr, cg, cb, _ := img.At(x, y).RGBA()
				o := c.off(x, y)
				c.pix[o], c.pix[o+1], c.pix[o+2] = float32(cr>>8), float32(cg>>8), float32(cb>>8)
			}
		}
	}
	return c
}

func (c *canvas) clone() *canvas {
	return &canvas{r: c.r, pix: append([]float32(nil), c.pix...)}
}

func (c *canvas) off(x, y int) int { return 3 * ((y-c.r.Min.Y)*c.r.Dx() + (x - c.r.Min.X)) }

// blend mixes colour col into pixel (x, y) with opacity a ∈ [0,1].
func (c *canvas) blend(x, y int, col rgb, a float64) {
	if a <= 0 || !(image.Point{x, y}).In(c.r) {
		return
	}
	if a > 1 {
		a = 1
	}
	o := c.off(x, y)
	for k := 0; k < 3; k++ {
		c.pix[o+k] = float32(float64(c.pix[o+k])*(1-a) + col[k]*a)
	}
}

// sample returns the bilinearly interpolated colour at (x, y) (edge pixels
// extend outward).
func (c *canvas) sample(x, y float64) rgb {
	x0f, y0f := math.Floor(x), math.Floor(y)
	fx, fy := x-x0f, y-y0f
	x0, y0 := int(x0f), int(y0f)
	var out rgb
	for dy := 0; dy < 2; dy++ {
		wy := 1 - fy
		if dy == 1 {
			wy = fy
		}
		yy := clampInt(y0+dy, c.r.Min.Y, c.r.Max.Y-1)
		for dx := 0; dx < 2; dx++ {
			wx := 1 - fx
			if dx == 1 {
				wx = fx
			}
			xx := clampInt(x0+dx, c.r.Min.X, c.r.Max.X-1)
			o := c.off(xx, yy)
			for k := 0; k < 3; k++ {
				out[k] += wx * wy * float64(c.pix[o+k])
			}
		}
	}
	return out
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// image quantizes the canvas to an RGBA image with the source's bounds.
func (c *canvas) image() *image.RGBA {
	out := image.NewRGBA(c.r)
	n := c.r.Dx() * c.r.Dy()
	for i := 0; i < n; i++ {
		for k := 0; k < 3; k++ {
			out.Pix[4*i+k] = quantize(c.pix[3*i+k])
		}
		out.Pix[4*i+3] = 255
	}
	return out
}

// quantize rounds to the nearest uint8, clamping to [0, 255]; integral
// values map to themselves exactly.
func quantize(f float32) uint8 {
	switch {
	case f <= 0:
		return 0
	case f >= 255:
		return 255
	}
	return uint8(f + 0.5)
}

// strokeSegment draws the segment ab with width w (anti-aliased over one
// pixel), opacity a scaled by taper(t) along it (nil: constant).
func (c *canvas) strokeSegment(a, b vec, w float64, col rgb, alpha float64, taper func(t float64) float64) {
	r := boundsOf(w/2+1, a, b).Intersect(c.r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			d, t := segDist(vec{float64(x), float64(y)}, a, b)
			cov := clamp01(w/2 + 0.5 - d)
			if cov <= 0 {
				continue
			}
			al := alpha * cov
			if taper != nil {
				al *= taper(t)
			}
			c.blend(x, y, col, al)
		}
	}
}

// strokeSDF draws the outline {p : |sdf(p)| ≤ w/2} inside r, anti-aliased.
func (c *canvas) strokeSDF(r image.Rectangle, sdf func(vec) float64, w float64, col rgb, alpha float64) {
	r = r.Intersect(c.r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			d := math.Abs(sdf(vec{float64(x), float64(y)}))
			if cov := clamp01(w/2 + 0.5 - d); cov > 0 {
				c.blend(x, y, col, alpha*cov)
			}
		}
	}
}

// fillSDF fills {p : sdf(p) ≤ 0} inside r, anti-aliased, with opacity
// alpha·shade(p) (shade nil: 1).
func (c *canvas) fillSDF(r image.Rectangle, sdf func(vec) float64, col rgb, alpha float64, shade func(vec) float64) {
	r = r.Intersect(c.r)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			p := vec{float64(x), float64(y)}
			cov := clamp01(0.5 - sdf(p))
			if cov <= 0 {
				continue
			}
			al := alpha * cov
			if shade != nil {
				al *= shade(p)
			}
			c.blend(x, y, col, al)
		}
	}
}
