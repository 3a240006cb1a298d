package acq

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/gp"
	"github.com/tesbo/tesbo/pareto"
)

// nehvi is the noisy expected hypervolume improvement of a batch (qNEHVI,
// Daulton, Balandat & Bakshy 2021) in log form (qLogNEHVI, Ament et al.
// 2023), for studies with several objectives and optional outcome
// constraints:
//
//	α(B) = log E_f[ HV(F_f ∪ f(B)) − HV(F_f) ],
//
// where f is a joint posterior sample of every output at the baseline
// (the evaluated and pending points) and the batch, F_f the Pareto front
// of the baseline points that f makes feasible, HV the hypervolume above
// MultiState.RefPoint (pareto.Hypervolume, oriented values via ToValue).
// Integrating over the baseline's unknown noise-free values is what makes
// it "noisy": no incumbent front is taken as known.
//
// The expectation is a sample average over N base samples fixed in
// Prepare: baseline values f_b^s drawn once, and the batch's values
// f_B^s = A f_b^s + b + chol(S) z^s from the posterior conditioned on
// noise-free values at the baseline (gp.Conditioned), so α is a
// deterministic function of B, maximized jointly over the q points with
// finite-difference gradients. A batch point's constraint feasibility
// enters softly, as in BoTorch: its objective vector is moved towards the
// reference point, y' = r + w (y − r), with w = Π_c sigmoid(c/τ), τ = 10⁻³
// (model units). Unlike qLogNEHVI, the hypervolume improvement itself is
// not smoothed (no fat-max), so α is −∞-floored (log of 10⁻³⁰⁰) where no
// sample improves; the raw-sample stage of the optimizer finds the region
// where some do.
type nehvi struct {
	Samples  int
	Settings OptimizeSettings
}

// Propose implements Proposer: nehvi needs several outputs.
func (nehvi) Propose(context.Context, *State, int) (*mat.Dense, error) {
	return nil, needsOutputs("nehvi")
}

// OutputsOnly implements OutputsOnly: nehvi has no form for one value.
func (nehvi) OutputsOnly() {}

// HandlesPending reports that pending points join the baseline.
func (nehvi) HandlesPending() bool { return true }

// ProposeMulti implements MultiProposer.
func (e nehvi) ProposeMulti(ctx context.Context, s *MultiState, q int) (*mat.Dense, error) {
	if err := CheckMulti("nehvi", s, q); err != nil {
		return nil, err
	}
	f, err := e.prepare(s, q)
	if err != nil {
		return nil, err
	}
	g := s.Outputs[0].GP
	w := FeasibilityWeighted(f, &State{Feasible: s.Feasible})
	X, _, err := MaximizeMixed(ctx, w, q, g.Dim(), CategoriesOf(g), e.Settings, s.Rand)
	if err != nil {
		return nil, fmt.Errorf("nehvi: maximize: %w", err)
	}
	return X, nil
}

// nehviFunc is nehvi's prepared α.
type nehviFunc struct {
	s        *MultiState
	obj, con []int
	thr      []float64
	ref      []float64
	cond     []*gp.Conditioned
	base     [][]float64 // per sample, per output k: the baseline values (k*nb …)
	nb       int
	front    []pareto.Base // per sample: the baseline's feasible front (oriented values)
	z        []float64     // per sample, per output, per batch point: base normals
	q        int
}

func (e nehvi) prepare(s *MultiState, q int) (*nehviFunc, error) {
	obj, con, thr := kindsOf(s)
	ref := RefPointOf(s)
	if len(ref) != len(obj) {
		return nil, fmt.Errorf("nehvi: reference point has %d values for %d objectives", len(ref), len(obj))
	}
	Xb := s.X
	if s.Pending != nil {
		n, d := s.X.Dims()
		p, _ := s.Pending.Dims()
		Xb = mat.NewDense(n+p, d, nil)
		Xb.Stack(s.X, s.Pending)
	}
	nb, _ := Xb.Dims()
	N := e.Samples
	if N <= 0 {
		N = 128
	}
	m := len(s.Outputs)
	f := &nehviFunc{s: s, obj: obj, con: con, thr: thr, ref: ref, nb: nb, q: q}
	f.base = make([][]float64, N)
	for i := range f.base {
		f.base[i] = make([]float64, m*nb)
	}
	for k, o := range s.Outputs {
		if err := SampleAt(o.GP, Xb, f.base, k*nb, s.Rand); err != nil {
			return nil, fmt.Errorf("nehvi: output %q at the baseline: %w", o.Name, err)
		}
		c, err := o.GP.Condition(Xb)
		if err != nil {
			return nil, fmt.Errorf("nehvi: condition output %q on the baseline: %w", o.Name, err)
		}
		f.cond = append(f.cond, c)
	}
	f.z = make([]float64, N*m*q)
	for i := range f.z {
		f.z[i] = s.Rand.NormFloat64()
	}
	for _, bs := range f.base {
		var pts [][]float64
		for i := 0; i < nb; i++ {
			if !f.feasible(func(k int) float64 { return bs[k*nb+i] }) {
				continue
			}
			pts = append(pts, f.oriented(func(k int) float64 { return bs[k*nb+i] }, 1))
		}
		fr := make([][]float64, 0)
		for _, j := range pareto.Front(pts) {
			fr = append(fr, pts[j])
		}
		f.front = append(f.front, pareto.NewBase(fr, ref))
	}
	return f, nil
}

// RefPointOf returns the study's reference point (oriented values, one per
// objective) or, when it gives none, the one pareto.RefPoint derives from
// the objectives of the feasible evaluated points (all of them while none
// is feasible).
func RefPointOf(s *MultiState) []float64 {
	if s.RefPoint != nil {
		return s.RefPoint
	}
	obj, con, _ := kindsOf(s)
	n, _ := s.Y.Dims()
	var all, feas [][]float64
	for i := 0; i < n; i++ {
		var y []float64
		for _, k := range obj {
			y = append(y, s.Y.At(i, k))
		}
		all = append(all, y)
		ok := true
		for _, k := range con {
			ok = ok && s.Y.At(i, k) >= 0
		}
		if ok {
			feas = append(feas, y)
		}
	}
	if len(feas) > 0 {
		return pareto.RefPoint(feas)
	}
	return pareto.RefPoint(all)
}

// weight is Π_c sigmoid((z_c − thr_c)/τ) for the model-unit outputs val.
func (f *nehviFunc) weight(val func(k int) float64) float64 {
	w := 1.0
	for i, k := range f.con {
		w *= 1 / (1 + math.Exp(-(val(k)-f.thr[i])/1e-3))
	}
	return w
}

// feasible reports whether every constraint output of val is at or above
// its threshold.
func (f *nehviFunc) feasible(val func(k int) float64) bool {
	for i, k := range f.con {
		if val(k) < f.thr[i] {
			return false
		}
	}
	return true
}

// oriented returns the objectives' oriented values r + w·(y − r).
func (f *nehviFunc) oriented(val func(k int) float64, w float64) []float64 {
	out := make([]float64, len(f.obj))
	for j, k := range f.obj {
		y := f.s.Outputs[k].ToValue(val(k))
		out[j] = f.ref[j] + w*(y-f.ref[j])
	}
	return out
}

func (f *nehviFunc) Eval(X, _ *mat.Dense) float64 {
	q, _ := X.Dims()
	m := len(f.s.Outputs)
	A := make([]*mat.Dense, m)
	b := make([][]float64, m)
	L := make([]*mat.TriDense, m)
	for k, c := range f.cond {
		var S *mat.SymDense
		A[k], b[k], S = c.Predict(X)
		var err error
		if L[k], err = cholJitter(S); err != nil {
			return math.Inf(-1)
		}
	}
	fb := make([]float64, m*q)
	sum := 0.0
	for s, bs := range f.base {
		for k := 0; k < m; k++ {
			Ak := A[k].RawMatrix()
			base := bs[k*f.nb : (k+1)*f.nb]
			z := f.z[(s*m+k)*f.q : (s*m+k)*f.q+q]
			for i := 0; i < q; i++ {
				v := b[k][i]
				for j, a := range Ak.Data[i*Ak.Stride : i*Ak.Stride+f.nb] {
					v += a * base[j]
				}
				for j := 0; j <= i; j++ {
					v += L[k].At(i, j) * z[j]
				}
				fb[k*q+i] = v
			}
		}
		added := make([][]float64, q)
		for i := range added {
			val := func(k int) float64 { return fb[k*q+i] }
			added[i] = f.oriented(val, f.weight(val))
		}
		sum += f.front[s].Improvement(added)
	}
	return math.Log(math.Max(sum/float64(len(f.base)), 1e-300))
}

// logScale marks α as a logarithm for FeasibilityWeighted.
func (f *nehviFunc) logScale() bool { return true }
