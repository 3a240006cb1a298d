package loader

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
	"github.com/tesbo/tesbo/sdk"
)

// stopAt is an sdk.Reporter that keeps what it is told and says stop from
// step stop on, or fails from step fail on.
type stopAt struct {
	stop, fail int
	mu         sync.Mutex
	got        []float64
}

func (s *stopAt) Report(step int, v float64) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail > 0 && step >= s.fail {
		return false, errors.New("no room for step")
	}
	s.got = append(s.got, float64(step), v)
	return s.stop > 0 && step >= s.stop, nil
}

// Intermediate values travel from a Go plugin (gRPC, ReportEvaluate) and
// from a Yaegi script (served by the script runner the same way) to the
// host's reporter, and its decision back: the objective stops at the step
// it is told to and returns that step's value. A reporter's error comes
// back as the evaluation's. Without a reporter the plugin runs to its end.
func TestReportEveryPluginKind(t *testing.T) {
	dir := pluginsDir(t, []string{"reporting"}, map[string]string{"reportscript.go": "testdata/scripts/reporting.go"})
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	for _, name := range []string{"reporting", "reportscript"} {
		t.Run(name, func(t *testing.T) {
			o, err := r.Objective(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if info, _ := o.Info(ctx); info.MaxStep != 5 {
				t.Errorf("MaxStep = %d, want 5", info.MaxStep)
			}
			rep := &stopAt{stop: 3}
			v, err := o.Evaluate(sdk.WithReporter(ctx, rep), []float64{0.5, 0.1})
			if want := []float64{1, 0.5, 2, 1, 3, 1.5}; err != nil || v != 1.5 || !slices.Equal(rep.got, want) {
				t.Fatalf("pruned at 3: value %v, %v; reported %v, want 1.5 after %v", v, err, rep.got, want)
			}
			res, err := o.EvaluateDetail(sdk.WithReporter(ctx, &stopAt{stop: 2}), []float64{0.5, 0.1})
			if err != nil || res.Value != 1 {
				t.Fatalf("detail pruned at 2: %v, %v", res, err)
			}
			if _, err := o.Evaluate(sdk.WithReporter(ctx, &stopAt{fail: 2}), []float64{0.5, 0.1}); err == nil || !strings.Contains(err.Error(), "no room for step") {
				t.Fatalf("a reporter's error: %v", err)
			}
			if v, err := o.Evaluate(context.WithoutCancel(ctx), []float64{0.5, 0.1}); err != nil || v != 2.5 {
				t.Fatalf("without a reporter: %v, %v; want 2.5", v, err)
			}
		})
	}
}

// The same through a Python plugin (examples/python-objective's
// learning_curve.py, serving ReportEvaluate with objective.report_evaluate)
// when a Python with grpcio is installed; under CI it must run.
func TestReportPython(t *testing.T) {
	dir := testenv.PythonPlugin(t, "../../examples/python-objective/learning_curve.py", "learning-curve-py")
	r := open(t, dir, Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "learning-curve-py")
	if err != nil {
		t.Fatal(err)
	}
	if info, _ := o.Info(ctx); info.MaxStep != 8 {
		t.Errorf("MaxStep = %d, want 8", info.MaxStep)
	}
	acc := func(lr, w float64, k int) float64 {
		q := 1 - (math.Log10(lr)+2)*(math.Log10(lr)+2)/4 - (w-0.6)*(w-0.6)
		return q * (1 - math.Exp(-float64(k)*lr*10))
	}
	x := []float64{0.01, 0.5}
	rep := &stopAt{stop: 2}
	v, err := o.Evaluate(sdk.WithReporter(ctx, rep), x)
	want := []float64{1, acc(0.01, 0.5, 1), 2, acc(0.01, 0.5, 2)}
	if err != nil || !slices.EqualFunc(rep.got, want, near) || !near(v, want[3]) {
		t.Fatalf("pruned at 2: %v, %v; reported %v, want %v", v, err, rep.got, want)
	}
	if _, err := o.Evaluate(sdk.WithReporter(ctx, &stopAt{fail: 3}), x); err == nil || !strings.Contains(err.Error(), "no room for step") {
		t.Fatalf("a reporter's error: %v", err)
	}
	if v, err := o.Evaluate(ctx, x); err != nil || !near(v, acc(0.01, 0.5, 8)) {
		t.Fatalf("without a reporter: %v, %v; want %v", v, err, acc(0.01, 0.5, 8))
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
