package nn

import "math"

// softmaxCrossEntropy returns the summed cross-entropy of n examples,
//
//	L = Σ_i −log softmax(z_i)[y_i],  softmax(z)_c = exp(z_c) / Σ_c' exp(z_c'),
//
// for logits z (n × classes) and labels y ∈ [0, classes), and writes
// scale·∂L/∂z = scale·(softmax(z_i) − onehot(y_i)) into grad (same size as
// logits; nil skips it). It works in float64 with the maximum logit
// subtracted, so large logits do not overflow. Non-finite logits give a
// non-finite loss (the caller's divergence check).
func softmaxCrossEntropy[T float](logits []T, labels []int, classes int, scale float64, grad []T) float64 {
	var total float64
	p := make([]float64, classes)
	for i, y := range labels {
		z := logits[i*classes : (i+1)*classes]
		zmax := math.Inf(-1)
		for _, v := range z {
			zmax = max(zmax, float64(v))
		}
		var sum float64
		for c, v := range z {
			p[c] = math.Exp(float64(v) - zmax)
			sum += p[c]
		}
		total += math.Log(sum) - (float64(z[y]) - zmax)
		if grad == nil {
			continue
		}
		g := grad[i*classes : (i+1)*classes]
		for c := range p {
			v := p[c] / sum
			if c == y {
				v--
			}
			g[c] = T(scale * v)
		}
	}
	return total
}

// l2Penalty returns (λ/2)·Σ w² over the parameters marked Decay (weights,
// not biases), the regularizer whose gradient addL2Grad adds.
func l2Penalty[T float](params []*Param[T], lambda float64) float64 {
	var s float64
	for _, p := range params {
		if !p.Decay {
			continue
		}
		for _, w := range p.W {
			s += float64(w) * float64(w)
		}
	}
	return lambda / 2 * s
}

// addL2Grad adds ∂/∂w (λ/2)·Σ w² = λ·w into G for the parameters marked
// Decay.
//
// Train does not call it: SGD.Update adds the same λ·w inside its momentum
// loop, which saves a pass over every weight per update and fixes the
// rounding order of the recorded same-seed accuracies ((μv + G) + λw;
// calling addL2Grad first would round μv + (G + λw)). addL2Grad and
// l2Penalty are the reference form of the penalty, checked against central
// differences, and TestSGDInlineL2MatchesAddL2Grad checks SGD against
// them; they also serve an optimizer that takes a plain gradient.
func addL2Grad[T float](params []*Param[T], lambda float64) {
	l := T(lambda)
	for _, p := range params {
		if !p.Decay {
			continue
		}
		for i, w := range p.W {
			p.G[i] += l * w
		}
	}
}
