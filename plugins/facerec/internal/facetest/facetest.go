// Package facetest holds test fixtures shared by the facerec packages'
// tests: a synthetic frontal face's 68 landmarks and image comparisons.
package facetest

import (
	"image"
	"image/color"
	"math"
)

// UnitLandmarks returns the 68 landmarks (dlib's order) of a frontal face
// in the unit square: points 17..67 are dlib's mean face, the jaw (0..16)
// an arc around it. Callers scale and place them.
func UnitLandmarks() [68][2]float64 {
	var lm [68][2]float64
	for i := 0; i <= 16; i++ {
		phi := math.Pi - float64(i)*math.Pi/16
		lm[i] = [2]float64{0.49 + 0.56*math.Cos(phi), 0.25 + 0.9*math.Sin(phi)}
	}
	for i := 17; i < 68; i++ {
		lm[i] = [2]float64{meanX[i-17], meanY[i-17]}
	}
	return lm
}

// dlib's mean face (points 17..67) in [0,1]², the geometry the sidecar also
// aligns to.
var meanX = []float64{
	0.000213256, 0.0752622, 0.18113, 0.29077, 0.393397, 0.586856, 0.689483, 0.799124,
	0.904991, 0.98004, 0.490127, 0.490127, 0.490127, 0.490127, 0.36688, 0.426036,
	0.490127, 0.554217, 0.613373, 0.121737, 0.187122, 0.265825, 0.334606, 0.260918,
	0.182743, 0.645647, 0.714428, 0.793132, 0.858516, 0.79751, 0.719335, 0.254149,
	0.340985, 0.428858, 0.490127, 0.551395, 0.639268, 0.726104, 0.642159, 0.556721,
	0.490127, 0.423532, 0.338094, 0.290379, 0.428096, 0.490127, 0.552157, 0.689874,
	0.553364, 0.490127, 0.42689,
}
var meanY = []float64{
	0.106454, 0.038915, 0.0187482, 0.0344891, 0.0773906, 0.0773906, 0.0344891,
	0.0187482, 0.038915, 0.106454, 0.203352, 0.307009, 0.409805, 0.515625, 0.587326,
	0.609345, 0.628106, 0.609345, 0.587326, 0.216423, 0.178758, 0.179852, 0.231733,
	0.245099, 0.244077, 0.231733, 0.179852, 0.178758, 0.216423, 0.244077, 0.245099,
	0.780233, 0.745405, 0.727388, 0.742578, 0.727388, 0.745405, 0.780233, 0.864805,
	0.902192, 0.909281, 0.902192, 0.864805, 0.784792, 0.778746, 0.785343, 0.778746,
	0.784792, 0.824182, 0.831803, 0.824182,
}

// MeanRGB returns the mean R, G, B of img over r.
func MeanRGB(img image.Image, r image.Rectangle) [3]float64 {
	var m [3]float64
	n := float64(r.Dx() * r.Dy())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			m[0] += float64(c.R) / n
			m[1] += float64(c.G) / n
			m[2] += float64(c.B) / n
		}
	}
	return m
}

// MaxAbsDiff returns the largest channel difference of two colours.
func MaxAbsDiff(a, b [3]float64) float64 {
	return math.Max(math.Abs(a[0]-b[0]), math.Max(math.Abs(a[1]-b[1]), math.Abs(a[2]-b[2])))
}
