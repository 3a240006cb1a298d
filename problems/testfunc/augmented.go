package testfunc

import "math"

// BoTorch's multi-fidelity test functions (botorch.test_functions.
// multi_fidelity), minimized, with the fidelity s ∈ [0, 1] as the last
// input (s = 1 is the function itself).

// AugmentedBranin is Branin whose quadratic coefficient moves with the
// fidelity s, on x1 ∈ [−5, 10], x2 ∈ [0, 15]:
//
//	B(x, s) = (x2 − (b − 0.1(1 − s)) x1² + c x1 − r)² + 10(1 − t) cos x1 + 10,
//
// b = 5.1/(4π²), c = 5/π, r = 6, t = 1/(8π). At s = 1 it is Branin, with
// minimum 0.397887 at (−π, 12.275), (π, 2.275) and (9.42478, 2.475); at
// lower fidelities the minimum is also 0.397887 (x1 = ±π, x2 shifted), so
// the low fidelities are shifted copies rather than rougher ones.
func AugmentedBranin(x1, x2, s float64) float64 {
	h := x2 - (braninB-0.1*(1-s))*x1*x1 + braninC*x1 - braninR
	return braninA*h*h + braninS*(1-braninT)*math.Cos(x1) + braninS
}

// AugmentedHartmann is Hartmann-6 (minimized) whose first term's weight
// drops by 0.1(1 − s) at fidelity s, on [0, 1]⁶:
//
//	H(x, s) = −(α1 − 0.1(1 − s)) e^(−q1(x)) − Σ_{i=2}^4 α_i e^(−q_i(x)),
//
// q_i(x) = Σ_j A_ij (x_j − P_ij)². At s = 1 it is Hartmann-6, with minimum
// −3.32237 at x* ≈ (0.20169, 0.150011, 0.476874, 0.275332, 0.311652,
// 0.6573).
func AugmentedHartmann(x []float64, s float64) float64 {
	h := &hartmann6Params
	var v float64
	for i, a := range h.alpha {
		var q float64
		for j, xj := range x {
			d := xj - h.p[i][j]
			q += h.a[i][j] * d * d
		}
		if i == 0 {
			a -= 0.1 * (1 - s)
		}
		v -= a * math.Exp(-q)
	}
	return v
}
