package host

import "math/rand/v2"

// stream names one use of randomness within an iteration. Every random
// number the host (or an acquisition it calls) draws comes from
// streamRand(seed, iteration, stream), so a study's whole run is a function
// of its seed and the sequence of observed values: resuming after a crash
// replays exactly, and Ask/Tell and Optimize agree.
type stream uint64

const (
	streamDesign    stream = iota + 1 // initial design / no-data fallback
	streamFit                         // GP hyper-parameter restarts
	streamPropose                     // the acquisition's State.Rand
	streamNudge                       // moving duplicate proposals
	streamRecommend                   // recommendation refinement
	streamFeasible                    // replacing proposals where evaluations fail
)

// splitmix64 is a bijective 64-bit mixer (Steele et al. 2014).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// streamRand returns the PCG stream for (seed, iteration, s).
func streamRand(seed uint64, iteration int, s stream) *rand.Rand {
	hi := splitmix64(seed ^ splitmix64(uint64(s)))
	lo := splitmix64(uint64(iteration)*0x2545f4914f6cdd1d ^ splitmix64(seed+uint64(s)))
	return rand.New(rand.NewPCG(hi, lo))
}

// iterationSeed is a 64-bit seed for consumers that take a seed rather than
// a *rand.Rand (sdk.SuggestRequest.Seed).
func iterationSeed(seed uint64, iteration int) uint64 {
	return streamRand(seed, iteration, streamPropose).Uint64()
}
