package linalg

// MillsTerms is the depth of the continued fraction in MillsTails; for
// u ≥ 5 it gives full double precision (checked in the tests), at u = 3
// a relative error near 1e-15.
const MillsTerms = 80

// MillsTails evaluates, for u ≥ 3, the two innermost tails of the Laplace
// continued fraction of the Gaussian Mills ratio
//
//	R(u) = Φ(−u)/φ(u) = 1/(u + t),  t = 1/(u + s),  s = 2/(u + 3/(u + …)),
//
// bottom-up over MillsTerms terms, returning t and s. They give the
// inverse Mills ratio λ(−u) = φ(u)/Φ(−u) = u + t, log Φ(−u) =
// log φ(u) − log(u + t), and the truncated-normal variance factor
// 1 − λ(λ − u) = t(s − t), all without the cancellation of φ/Φ far in the
// tail.
func MillsTails(u float64) (t, s float64) {
	r := 0.0
	for n := MillsTerms; n >= 2; n-- {
		r = float64(n) / (u + r)
	}
	s = r
	t = 1 / (u + s)
	return t, s
}
