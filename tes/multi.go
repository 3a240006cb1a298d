package tes

import (
	"context"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
)

// multiTES is TES for studies with several outputs (objectives and
// outcome constraints); see the package doc, "Several outputs".
type multiTES struct {
	Settings multiSettings
	Optimize acq.OptimizeSettings
}

// ProposeMulti proposes q points that jointly maximize the information
// lower bound α(B | pending).
func (mt multiTES) ProposeMulti(ctx context.Context, s *acq.MultiState, q int) (*mat.Dense, error) {
	if err := acq.CheckMulti("tes", s, q); err != nil {
		return nil, err
	}
	f, err := mt.prepare(s, q)
	if err != nil {
		return nil, err
	}
	d := s.Outputs[0].GP.Dim()
	w := acq.FeasibilityWeighted(f, &acq.State{Feasible: s.Feasible})
	X, _, err := acq.MaximizeMixed(ctx, w, q, d, acq.CategoriesOf(s.Outputs[0].GP), optimizeDefaults(mt.Optimize, q), s.Rand)
	if err != nil {
		return nil, fmt.Errorf("tes: maximize the several-output information: %w", err)
	}
	return X, nil
}

// prepare builds the iteration's multiInfo and wraps it as an acq.Func.
func (mt multiTES) prepare(s *acq.MultiState, q int) (*multiFunc, error) {
	set := mt.Settings.withDefaults(objectives(s), q)
	sc, err := newScalarizer(s, set.Weights, s.Rand)
	if err != nil {
		return nil, err
	}
	T, err := trustedSet(s, sc, set)
	if err != nil {
		return nil, err
	}
	mi, err := newMultiInfo(s, sc, T, set.Samples)
	if err != nil {
		return nil, err
	}
	return &multiFunc{mi: mi}, nil
}

// newMultiInfo draws S joint posterior samples of every output at T
// (exactly, from each output's posterior N(μ_T, K_T|D)), labels each by
// its trusted solution under every weight, groups the labels, keeps the
// total and the groups' covariances of the samples, and conditions each
// output on noise-free values at T.
func newMultiInfo(s *acq.MultiState, sc *scalarizer, T *mat.Dense, S int) (*multiInfo, error) {
	nT, _ := T.Dims()
	m := len(s.Outputs)
	mi := &multiInfo{T: T, pending: s.Pending}
	f := make([][]float64, S)
	for i := range f {
		f[i] = make([]float64, m*nT)
	}
	for k, o := range s.Outputs {
		if err := acq.SampleAt(o.GP, T, f, k*nT, s.Rand); err != nil {
			return nil, fmt.Errorf("tes: output %q: %w", o.Name, err)
		}
		c, err := o.GP.Condition(T)
		if err != nil {
			return nil, fmt.Errorf("tes: condition output %q on the trusted set: %w", o.Name, err)
		}
		mi.cond = append(mi.cond, c)
		mi.noise = append(mi.noise, math.Max(o.GP.NoiseVar(), 1e-8))
	}
	var groups [][][]int
	for l := range sc.lambda {
		labels := make([]int, S)
		for si, fs := range f {
			i, ok := sc.best(l, nT, func(i, k int) float64 { return fs[k*nT+i] })
			if !ok {
				i = -1
			}
			labels[si] = i
		}
		groups = append(groups, groupSamples(labels))
	}
	mi.blocks = newBlocks(f, groups)
	if s.Pending != nil {
		if p, _ := s.Pending.Dims(); p > 0 {
			mi.base, _ = mi.info(s.Pending, false)
		}
	}
	return mi, nil
}

// multiFunc adapts multiInfo to acq.Func with an analytic gradient and
// starts at the trusted set.
type multiFunc struct{ mi *multiInfo }

func (f *multiFunc) HasGradient() bool { return true }

func (f *multiFunc) Eval(X, grad *mat.Dense) float64 { return f.mi.eval(X, grad) }

// Starts suggests batches of trusted solutions: start r takes rows r·q …
// r·q + q − 1 of T (cyclically), for up to 4 starts.
func (f *multiFunc) Starts(q int) []*mat.Dense {
	nT, d := f.mi.T.Dims()
	var out []*mat.Dense
	for r := 0; r < 4 && r*q < max(nT, 1); r++ {
		B := mat.NewDense(q, d, nil)
		for i := 0; i < q; i++ {
			B.SetRow(i, f.mi.T.RawRowView((r*q+i)%nT))
		}
		out = append(out, B)
	}
	return out
}
