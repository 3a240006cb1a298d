package host

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/tesbo/tesbo/problems/conditional"
	"github.com/tesbo/tesbo/sdk"
)

func condInfo(t *testing.T) sdk.Info {
	t.Helper()
	o, _ := conditional.New("cond/branches")
	info, _ := o.Info(context.Background())
	return info
}

// An inactive parameter is NaN in native units and its default in the
// unit cube, whatever value the caller or the optimizer gave it.
func TestConditionalSpace(t *testing.T) {
	sp, err := NewSpace(condInfo(t).Params)
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	// branch b: x1 and k active; x2, y1, y2 inactive (k's default is the middle of 5 bins).
	u, err := sp.ToUnit([]float64{1, 0.25, 0.9, 4, nan, 17, 0.5})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{0.5, 0.25, 0.5, 0.7, 0.5, 0.5, 0.5}
	for i := range want {
		if math.Abs(u[i]-want[i]) > 1e-15 {
			t.Fatalf("ToUnit: %v, want %v", u, want)
		}
	}
	x := sp.ToNative([]float64{0.5, 0.25, 0.123, 0.7, 0.9, 0.1, 0.5})
	if !math.IsNaN(x[2]) || !math.IsNaN(x[4]) || !math.IsNaN(x[5]) || x[1] != 0.25 || x[3] != 4 {
		t.Fatalf("ToNative: %v, want NaN for x2, y1, y2", x)
	}
	s := sp.Snap([]float64{0.9, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3}) // branch c
	if !slices.Equal(s[1:4], []float64{0.5, 0.5, 0.5}) || s[4] != 0.3 {
		t.Fatalf("Snap: %v, want x1, x2, k at their defaults", s)
	}
	if _, err := sp.ToUnit([]float64{1, nan, nan, 4, nan, nan, 0.5}); err == nil {
		t.Fatal("an active parameter (x1) given NaN was accepted")
	}
	// acq.State.Conditional: every parameter with a condition, not the
	// branch nor the shared z.
	if c := sp.conditionalCoords(); !slices.Equal(c, []bool{false, true, true, true, true, true, false}) {
		t.Fatalf("conditional coordinates %v", c)
	}
}

// Inactive parameters never reach the objective: cond/branches refuses a
// point whose inactive parameters are not NaN (or active ones are), and
// every trial of every acquisition completes, its inactive coordinates
// NaN in X and at their defaults in U.
func TestInactiveNeverReachObjective(t *testing.T) {
	for _, name := range []string{"tes", "ei", "qei", "ts", "random"} {
		t.Run(name, func(t *testing.T) {
			obj, _ := conditional.New("cond/branches")
			res, err := Optimize(context.Background(), obj, Options{Acquisition: name, Batch: 2, Iters: 4, Init: 4, Seed: 6, Grace: -1})
			if err != nil {
				t.Fatal(err)
			}
			sp, _ := NewSpace(condInfo(t).Params)
			branches := map[float64]bool{}
			for _, tr := range res.Trials {
				if tr.Status != Complete {
					t.Fatalf("trial %d %v: %s", tr.ID, tr.X, tr.Error)
				}
				branches[tr.X[0]] = true
				act := sdk.Space(condInfo(t).Params).Active(tr.X)
				for i, a := range act {
					if !a && (!math.IsNaN(tr.X[i]) || tr.U[i] != sp.cond.def[i]) {
						t.Fatalf("trial %d: inactive coordinate %d is %v (unit %v)", tr.ID, i, tr.X[i], tr.U[i])
					}
				}
			}
			if len(branches) < 2 {
				t.Fatalf("only branches %v tried", branches)
			}
		})
	}
}

// Inactive values never change the model: two studies given the same
// evaluated points, one with NaN for the inactive parameters and one with
// arbitrary values there, fit the same GP and propose bitwise the same
// next points; the trials keep only the active values.
func TestInactiveNeverChangeModel(t *testing.T) {
	ctx := context.Background()
	info := condInfo(t)
	obj, _ := conditional.New("cond/branches")
	nan := math.NaN()
	clean := [][]float64{
		{0, 0.2, 0.6, nan, nan, nan, 0.3}, {1, 0.5, nan, 2, nan, nan, 0.8}, {2, nan, nan, nan, 0.7, 0.4, 0.1},
		{0, 0.9, 0.1, nan, nan, nan, 0.6}, {2, nan, nan, nan, 0.2, 0.9, 0.5}, {1, 0.1, nan, 5, nan, nan, 0.2},
	}
	garbage := func(x []float64) []float64 {
		y := slices.Clone(x)
		for i := range y {
			if math.IsNaN(y[i]) {
				y[i] = 0.77
				if i == 3 {
					y[i] = 1
				}
			}
		}
		return y
	}
	run := func(mess bool) ([]Trial, *modelState, []Trial) {
		s, err := NewStudy(ctx, info, Options{Acquisition: "ei", NoInit: true, Seed: 3, Batch: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range clean {
			v, err := obj.Evaluate(ctx, x)
			if err != nil {
				t.Fatal(err)
			}
			if mess {
				x = garbage(x)
			}
			if _, err := s.Attach(ctx, x, v); err != nil {
				t.Fatal(err)
			}
		}
		next, err := s.Ask(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		return next, s.lastModel, s.Trials()
	}
	a, ma, ta := run(false)
	b, mb, tb := run(true)
	if ma == nil || !slices.Equal(ma.Params, mb.Params) || ma.Noise != mb.Noise {
		t.Fatalf("models differ: %+v vs %+v", ma, mb)
	}
	sameTrials(t, a, b)
	for i := range clean {
		for j := range clean[i] {
			if math.IsNaN(clean[i][j]) != math.IsNaN(tb[i].X[j]) || math.Float64bits(ta[i].U[j]) != math.Float64bits(tb[i].U[j]) {
				t.Fatalf("trial %d: stored %v / %v, want only the active values %v", i, tb[i].X, tb[i].U, clean[i])
			}
		}
	}
}

// A conditional study stores NaN for inactive values and resumes bitwise.
func TestConditionalResumeExact(t *testing.T) {
	ctx := context.Background()
	obj := func() sdk.Objective { o, _ := conditional.New("cond/branches"); return o }
	opts := Options{Batch: 2, Iters: 4, Init: 3, Seed: 12, Grace: -1}
	want, err := Optimize(ctx, obj(), opts)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/c.db"
	db := openDB(t, path, true)
	o := opts
	o.DB, o.Name = wrap(db), "st"
	cctx, cancel := context.WithCancel(ctx)
	var n atomic.Int64
	o.OnTrial = func(Trial) {
		if n.Add(1) == 6 {
			cancel()
		}
	}
	if _, err := Optimize(cctx, obj(), o); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: %v", err)
	}
	cancel()
	s, err := OpenStudy(ctx, wrap(db), "st", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	defer s.Close()
	if _, err := s.Run(ctx, obj()); err != nil {
		t.Fatal(err)
	}
	sameTrials(t, want.Trials, s.Trials())
}

// A warm start from a study of the flattened space (cond/branches-flat,
// every parameter active) imports its trials with the parameters inactive
// here stored as such: NaN in X, their defaults in U; with the prior mode
// the design points it opens with are the same canonical points. The
// values the source gave them reach neither the trials nor the objective.
func TestWarmStartFromFlatStoresActiveOnly(t *testing.T) {
	ctx := context.Background()
	db := MemoryStorage()
	flat, _ := conditional.New("cond/branches-flat")
	old := sourceStudy(t, db, flat, Options{Acquisition: "random", Iters: 8, Init: 4, Seed: 3})
	info := condInfo(t)
	sp, _ := NewSpace(info.Params)
	check := func(what string, x, u []float64) {
		t.Helper()
		for i, a := range sdk.Space(info.Params).Active(x) {
			if !a && (!math.IsNaN(x[i]) || u != nil && u[i] != sp.cond.def[i]) {
				t.Fatalf("%s %v: inactive coordinate %d kept a value", what, x, i)
			}
		}
	}
	s, err := NewStudy(ctx, info, Options{DB: db, Name: "obs", NoInit: true, WarmStart: []string{"old"}, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Trials()) != len(old) {
		t.Fatalf("imported %d of %d trials", len(s.Trials()), len(old))
	}
	for _, tr := range s.Trials() {
		check("imported trial", tr.X, tr.U)
	}
	s.Close()
	p, err := NewStudy(ctx, info, Options{DB: db, Name: "prior", Init: 3, WarmStart: []string{"old"}, WarmStartMode: WarmPrior, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ts, err := p.Ask(ctx, 0)
	if err != nil || len(ts) != 3 {
		t.Fatalf("prior mode: %d design points, %v", len(ts), err)
	}
	for _, tr := range ts {
		check("prior design point", tr.X, tr.U)
		if _, err := flat.Evaluate(ctx, tr.X); err == nil {
			t.Fatalf("the flat objective took %v, which has NaN coordinates", tr.X)
		}
	}
	// The design points are stored with the study (their NaN as null), so
	// resuming issues the same ones.
	o, _, err := StoredSettings(ctx, db, "prior")
	if err != nil {
		t.Fatal(err)
	}
	nanEq := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	if len(o.warmPoints) != len(ts) || !slices.EqualFunc(o.warmPoints[0], ts[0].X, nanEq) {
		t.Fatalf("stored warm points %v, want the design %v", o.warmPoints, ts[0].X)
	}

	// Two flat trials that differ only where this space is inactive are
	// one point here: the prior mode opens with it once.
	flatInfo, _ := flat.Info(ctx)
	dup, err := NewStudy(ctx, flatInfo, Options{DB: db, Name: "dup", NoInit: true, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []struct {
		x []float64
		v float64
	}{
		{[]float64{0, 0.2, 0.3, 2, 0.1, 0.1, 0.5}, 1}, // branch a: y1, y2 and k inactive here
		{[]float64{0, 0.2, 0.3, 4, 0.9, 0.8, 0.5}, 1},
		{[]float64{2, 0.2, 0.3, 2, 0.4, 0.4, 0.5}, 0.5},
	} {
		if _, err := dup.Attach(ctx, a.x, a.v); err != nil {
			t.Fatal(err)
		}
	}
	dup.Close()
	q, err := NewStudy(ctx, info, Options{DB: db, Name: "prior-dup", Init: 2, WarmStart: []string{"dup"}, WarmStartMode: WarmPrior, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	qs, err := q.Ask(ctx, 0)
	if err != nil || len(qs) != 2 || qs[0].X[0] != 0 || qs[1].X[0] != 2 {
		t.Fatalf("prior mode from duplicates: %v, %v; want branch a's point once, then branch c's", qs, err)
	}
}
