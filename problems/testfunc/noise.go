package testfunc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Noise returns a standard normal deviate z ~ N(0,1) that is a deterministic
// function of seed and the float64 bits of x: z is the first NormFloat64 of
// a PCG generator seeded by a SplitMix64-style hash of (seed, len(x), bits of
// each x_j), with −0 read as +0. The same (seed, x) always gives the same z,
// whatever order or goroutine evaluates it; distinct inputs give independent
// deviates for all practical purposes.
func Noise(seed uint64, x []float64) float64 {
	h := mix(seed ^ 0x6e6f697365) // "noise"
	h = mix(h ^ uint64(len(x)))
	for _, v := range x {
		if v == 0 {
			v = 0 // −0 and +0 are the same input
		}
		h = mix(h ^ math.Float64bits(v))
	}
	r := rand.New(rand.NewPCG(h, mix(h^0x9e3779b97f4a7c15)))
	return r.NormFloat64()
}

// mix is the SplitMix64 finalizer (a bijection with good avalanche).
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Observe returns a noisy observation y = f(x) + √noiseVar · Noise(seed, x)
// (the benchmark observation model y = f(x) + ε, ε ~ N(0, σ_n²)). noiseVar
// must be finite and ≥ 0; pass fn.NoiseVar for the function's default.
func (fn *Function) Observe(x []float64, noiseVar float64, seed uint64) (float64, error) {
	if !(noiseVar >= 0) || math.IsInf(noiseVar, 0) {
		return math.NaN(), fmt.Errorf("%s: noise variance %v, want a finite number ≥ 0", fn.Name, noiseVar)
	}
	v, err := fn.Eval(x)
	if err != nil {
		return v, err
	}
	return v + math.Sqrt(noiseVar)*Noise(seed, x), nil
}

// NoiseSeed reads the run parameters of an objective whose observation
// noise is part of its definition (the user suite, the learning curves):
// "seed" seeds Noise, and "noise_var", which the host always sends, is
// accepted and ignored. set reports whether "seed" was given; any other
// key is an error naming the objective.
func NoiseSeed(name string, params map[string]string) (seed uint64, set bool, err error) {
	for k, v := range params {
		switch k {
		case "seed":
			if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
				return 0, false, fmt.Errorf("%s: bad seed %q: %w", name, v, err)
			}
			set = true
		case "noise_var":
		default:
			return 0, false, fmt.Errorf("%s: unknown parameter %q (accepted: seed)", name, k)
		}
	}
	return seed, set, nil
}
