package host

import (
	"context"
	"fmt"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/tesbo/tesbo/acq"
	"github.com/tesbo/tesbo/pareto"
	"github.com/tesbo/tesbo/sdk"
	"github.com/tesbo/tesbo/store"
)

// DefaultMultiAcquisition is the acquisition of a study with several
// outputs that leaves it at DefaultAcquisition: the one place to change it.
// It is DefaultAcquisition itself, tes, whose several-output form (package
// tes) implements acq.MultiProposer; a default without that form would be
// replaced by this one.
const DefaultMultiAcquisition = DefaultAcquisition

// orientation maps an output's native value v to the acquisition's frame
// (acq.Output): y = sign·v + off, larger is better for objectives and
// y ≥ 0 is feasible for constraints ("v ≤ b" gives b − v, "v ≥ b" gives
// v − b).
type orientation struct{ sign, off float64 }

func orientationOf(o sdk.Output) orientation {
	switch {
	case o.Goal == sdk.Minimize:
		return orientation{sign: -1}
	case o.Goal == sdk.Constraint && o.Feasible == sdk.AtMost:
		return orientation{sign: -1, off: *o.Bound}
	case o.Goal == sdk.Constraint:
		return orientation{sign: 1, off: -*o.Bound}
	}
	return orientation{sign: 1}
}

func (r orientation) apply(v float64) float64 { return r.sign*v + r.off }

// multiProposer returns the acquisition of a study whose objective declares
// several outputs, or an error naming what to use instead. A study left at
// DefaultAcquisition gets DefaultMultiAcquisition while the default has no
// several-output form.
func multiProposer(info sdk.Info, o *Options, prop acq.Proposer) (acq.Proposer, error) {
	if _, only := prop.(acq.OutputsOnly); only && len(info.Outputs) == 0 && o.Suggester == nil {
		return nil, fmt.Errorf("acquisition %s optimizes objectives of several outputs, and objective %s returns one value: use %s, ei or qei",
			o.Acquisition, info.Name, DefaultAcquisition)
	}
	if len(info.Outputs) == 0 || o.Suggester != nil {
		return prop, nil
	}
	if _, ok := prop.(acq.MultiProposer); ok {
		if c, ok := prop.(acq.OutputsChecker); ok {
			objs := len(info.Objectives())
			if err := c.CheckOutputs(objs, len(info.Outputs)-objs); err != nil {
				return nil, fmt.Errorf("objective %s: %w", info.Name, err)
			}
		}
		return prop, nil
	}
	if o.Acquisition == DefaultAcquisition && o.Proposer == nil && DefaultMultiAcquisition != DefaultAcquisition {
		p, err := acq.Lookup(DefaultMultiAcquisition, o.AcqOptions)
		if err != nil {
			return nil, err
		}
		if _, ok := p.(acq.MultiProposer); ok {
			o.Acquisition = DefaultMultiAcquisition
			return p, nil
		}
	}
	return nil, fmt.Errorf("acquisition %s cannot optimize objective %s's %d outputs (it is not an acq.MultiProposer): use one of %v",
		o.Acquisition, info.Name, len(info.Outputs), MultiAcquisitions())
}

// continuousProposer refuses an acquisition that needs the GP's
// derivatives (acq.ContinuousOnly) on a space with a categorical
// parameter, which would otherwise fall back to random points at every
// iteration.
func continuousProposer(info sdk.Info, o Options, prop acq.Proposer) error {
	if !acq.NeedsContinuous(prop) || o.Suggester != nil {
		return nil
	}
	for _, p := range info.Params {
		if p.Kind == sdk.Categorical {
			return fmt.Errorf("acquisition %s needs the GP's derivatives, which the kernel of a categorical parameter (%s) has not: use %s, ei or mes",
				o.Acquisition, p.Name, DefaultAcquisition)
		}
	}
	return nil
}

// MultiAcquisitions returns the registered acquisitions that optimize
// objectives of several outputs (acq.MultiProposer), sorted by name.
func MultiAcquisitions() []string {
	return registeredWith(func(p acq.Proposer) bool { _, ok := p.(acq.MultiProposer); return ok })
}

// proposeMulti is propose for a study with several outputs: one GP per
// output on the completed trials' shared inputs, fitted as the default
// single-output model is (fitModel: kernel, prior, warm start, warp), and
// the acquisition's ProposeMulti.
func (s *Study) proposeMulti(ctx context.Context, t, q int, it *store.Iteration, fallback func(string) (*mat.Dense, *modelState, error)) (*mat.Dense, *modelState, error) {
	mp := s.proposer.(acq.MultiProposer) // checked by newStudy (multiProposer)
	st, ms, err := s.multiState(ctx, t)
	if err != nil {
		return fitFallback(ctx, t, err, fallback)
	}
	if st == nil {
		return fallback("no completed evaluations yet")
	}
	for _, o := range ms.Outputs {
		it.FitSeconds += o.fitS
	}
	st.Pending = s.pendingMatrix()
	t0 := time.Now()
	X, err := mp.ProposeMulti(ctx, st, q)
	it.ProposeSeconds = time.Since(t0).Seconds()
	if err == nil {
		err = checkBatch(X, q, s.space.Dim())
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("propose iteration %d: %w", t, context.Cause(ctx))
		}
		X, fb, _ := fallback(fmt.Sprintf("acquisition %s: %v", s.opts.Acquisition, err))
		fb.Outputs, fb.N = ms.Outputs, ms.N
		return X, fb, s.carry(fb)
	}
	return X, ms, s.carry(ms)
}

// multiState fits one GP per output to the completed trials and fills
// acq.MultiState for iteration t; nil when no trial has completed.
func (s *Study) multiState(ctx context.Context, t int) (*acq.MultiState, *modelState, error) {
	var done []Trial
	for _, tr := range s.trials {
		if tr.Status == Complete && len(tr.Outputs) == len(s.info.Outputs) {
			done = append(done, tr)
		}
	}
	n, m := len(done), len(s.info.Outputs)
	if n == 0 {
		return nil, nil, nil
	}
	st := &acq.MultiState{Iter: t, Rand: streamRand(s.seed, t, streamPropose), Log: s.log,
		Feasible: s.feasibility(t, nil), IntStep: s.intSteps(nil), Evaluated: n,
		Y: mat.NewDense(n, m, nil)}
	ms := &modelState{N: n, Outputs: make([]modelState, m)}
	warp := false
	if w, ok := s.proposer.(acq.OutputWarper); ok && w.WarpOutputs() && !s.opts.FixNoise {
		warp = true
	}
	for k, out := range s.info.Outputs {
		r := orientationOf(out)
		col := make([]Trial, n)
		for i, tr := range done {
			col[i] = Trial{ID: tr.ID, Status: Complete, U: tr.U, Value: r.apply(tr.Outputs[k])}
			st.Y.Set(i, k, col[i].Value)
		}
		ds := newDataset(col, s.space.Dim(), false)
		if warp {
			ds.warp()
		}
		var warm *modelState
		if s.lastModel != nil && len(s.lastModel.Outputs) == m {
			warm = &s.lastModel.Outputs[k]
		}
		fr, err := s.fitModel(ctx, ds, warm, t)
		if err != nil {
			return nil, nil, fmt.Errorf("output %s: %w", out.Name, err)
		}
		ms.Outputs[k] = *fr.state
		ms.Outputs[k].fitS = fr.seconds
		kind := acq.Objective
		if out.Goal == sdk.Constraint {
			kind = acq.Constraint
		}
		st.Outputs = append(st.Outputs, acq.Output{Name: out.Name, Kind: kind, GP: fr.gp, ToValue: ds.native, ToModel: ds.model})
		st.X = ds.X
	}
	st.RefPoint, st.RefPointDeclared = s.refPoint(st.Y)
	return st, ms, nil
}

// model maps an oriented value y (the dataset's native units, sign +1) to
// model units: the inverse of native.
func (ds *dataset) model(y float64) float64 {
	z := (ds.sign*y - ds.mean) / ds.scale
	if ds.warped {
		z = (yeoJohnson((z-ds.m0)/ds.s0, ds.lambda) - ds.wm) / ds.ws
	}
	return z
}

// refPoint is the oriented reference point of a study with several
// objective outputs (nil for one): the user's (Options.RefPoint, or the
// objective's sdk.Info.RefPoint) mapped to the maximized frame, else
// derived from the observed oriented values Y by pareto.RefPoint
// (BoTorch's and Ax's rule: the nadir of the observed front minus 10% of
// its range), over the feasible trials when any is. declared says which.
func (s *Study) refPoint(Y *mat.Dense) (ref []float64, declared bool) {
	objs := s.info.Objectives()
	if len(objs) < 2 {
		return nil, false
	}
	if r := s.info.RefPoint; len(r) == len(objs) {
		out := make([]float64, len(objs))
		for j, k := range objs {
			out[j] = orientationOf(s.info.Outputs[k]).apply(r[j])
		}
		return out, true
	}
	rows := objectiveRows(s.info, Y, true)
	if len(rows) == 0 {
		rows = objectiveRows(s.info, Y, false)
	}
	return pareto.RefPoint(rows), false
}

// objectiveRows returns the oriented objective values of the rows of Y
// (oriented, one column per output), only the feasible rows when
// feasibleOnly.
func objectiveRows(info sdk.Info, Y *mat.Dense, feasibleOnly bool) [][]float64 {
	if Y == nil {
		return nil
	}
	objs := info.Objectives()
	n, _ := Y.Dims()
	var out [][]float64
	for i := range n {
		if feasibleOnly && !orientedFeasible(info, Y.RawRowView(i)) {
			continue
		}
		row := make([]float64, len(objs))
		for j, k := range objs {
			row[j] = Y.At(i, k)
		}
		out = append(out, row)
	}
	return out
}

// orientedFeasible reports whether every constraint of an oriented row is
// satisfied (≥ 0).
func orientedFeasible(info sdk.Info, y []float64) bool {
	for k, o := range info.Outputs {
		if o.Goal == sdk.Constraint && !(y[k] >= 0) {
			return false
		}
	}
	return true
}
