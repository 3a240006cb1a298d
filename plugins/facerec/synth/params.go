package synth

import (
	"fmt"
	"math"
)

// numParams is the number of edit parameters (the paper's 8).
const numParams = 8

// Names are the parameter names in Vector order, as the objective declares
// them.
var Names = [numParams]string{
	"beard", "mustache", "forehead_scar", "cheek_scar", "mole",
	"glasses_square", "glasses_round", "smile",
}

// Params are the eight edit strengths, each in [0, 1] with 0 = off.
type Params struct {
	Beard        float64 // stubble-to-full beard along the jaw: strand density and shading
	Mustache     float64 // hair between nose and upper lip
	ForeheadScar float64 // slanted scar above the left brow: length and contrast
	CheekScar    float64 // scar on the right cheek: length and contrast
	Mole         float64 // dark mole beside the nose: radius
	// GlassesSquare and GlassesRound select the eyeglasses style: none while
	// both are below 0.5, else squared frames if GlassesSquare ≥
	// GlassesRound, round frames otherwise (Glasses).
	GlassesSquare float64
	GlassesRound  float64
	Smile         float64 // mouth corners raised and widened by a smooth local warp
}

// GlassesStyle is the snapped eyeglasses style.
type GlassesStyle int

const (
	noGlasses GlassesStyle = iota
	squaredGlasses
	roundGlasses
)

// String returns "none", "squared" or "round".
func (g GlassesStyle) String() string {
	switch g {
	case squaredGlasses:
		return "squared"
	case roundGlasses:
		return "round"
	}
	return "none"
}

// Glasses snaps the two glasses parameters to a style.
func (p Params) Glasses() GlassesStyle {
	if p.GlassesSquare < 0.5 && p.GlassesRound < 0.5 {
		return noGlasses
	}
	if p.GlassesSquare >= p.GlassesRound {
		return squaredGlasses
	}
	return roundGlasses
}

// Vector returns the parameters in Names order.
func (p Params) Vector() []float64 {
	return []float64{p.Beard, p.Mustache, p.ForeheadScar, p.CheekScar, p.Mole,
		p.GlassesSquare, p.GlassesRound, p.Smile}
}

// FromVector builds Params from x in Names order and validates them.
func FromVector(x []float64) (Params, error) {
	if len(x) != numParams {
		return Params{}, fmt.Errorf("synth: got %d parameters, want %d (%v)", len(x), numParams, Names)
	}
	p := Params{x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]}
	return p, p.validate()
}

// validate reports the first parameter outside [0, 1] (or NaN), by name.
func (p Params) validate() error {
	for i, v := range p.Vector() {
		if math.IsNaN(v) || v < 0 || v > 1 {
			return fmt.Errorf("synth: parameter %s = %v is outside its bounds [0, 1]", Names[i], v)
		}
	}
	return nil
}
