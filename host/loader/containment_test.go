package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every containment case is its own test plugin (testdata/plugins,
// testdata/scripts). Each test checks the cause, that the message names
// the plugin and says what happened, and, where the process dies, that the
// next call gets a fresh process.

// wantErr checks that err is an *Error for plugin with cause and a message
// containing every fragment.
func wantErr(t *testing.T, err error, plugin string, cause error, fragments ...string) {
	t.Helper()
	var le *Error
	if !errors.As(err, &le) {
		t.Fatalf("err = %v (%T), want *loader.Error", err, err)
	}
	if le.Plugin != plugin || !errors.Is(err, cause) {
		t.Fatalf("err = %v; want plugin %q and cause %v", err, plugin, cause)
	}
	msg := err.Error()
	if !strings.Contains(msg, `plugin "`+plugin+`"`) {
		t.Fatalf("message does not name the plugin: %s", msg)
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Fatalf("message lacks %q: %s", f, msg)
		}
	}
	t.Logf("%s", msg)
}

func TestContainFailsToStart(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"crashstart"}, nil), Options{})
	_, err := r.Objective(ctxT(t), "crashstart")
	wantErr(t, err, "crashstart", ErrStart, "exited before the handshake", "exit status 3", "cannot open dataset")
}

func TestContainStdoutJunk(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"stdoutjunk"}, nil), Options{})
	_, err := r.Objective(ctxT(t), "stdoutjunk")
	wantErr(t, err, "stdoutjunk", ErrHandshake, `"loading model weights... done"`, "must not print to stdout")
}

func TestContainHangsAtStart(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"hangstart"}, nil), Options{StartTimeout: 500 * time.Millisecond})
	_, err := r.Objective(ctxT(t), "hangstart")
	wantErr(t, err, "hangstart", ErrStart, "no handshake within the start timeout", "did not serve within 500ms")
}

func TestContainExitsMidCall(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"exitmid"}, nil), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "exitmid")
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Evaluate(ctx, []float64{13})
	wantErr(t, err, "exitmid", ErrExited, "exit status 7", "out of memory (simulated)", "restarted on the next call")
	// Restarted on the next call.
	if v, err := o.Evaluate(ctx, []float64{2}); err != nil || v != 4 {
		t.Fatalf("after restart: %v, %v", v, err)
	}
}

func TestContainPanics(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"panic"}, nil), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "panic")
	if err != nil {
		t.Fatal(err)
	}
	// A panic in Evaluate is recovered by the sdk: an error, same process.
	_, err = o.Evaluate(ctx, []float64{13})
	wantErr(t, err, "panic", ErrPanic, "Evaluate panicked", "assignment to entry in nil map")
	if v, err := o.Evaluate(ctx, []float64{1}); err != nil || v != 2 {
		t.Fatalf("after recovered panic: %v, %v", v, err)
	}
	// A panic in a goroutine kills the process: its trace is in the error.
	_, err = o.Evaluate(ctx, []float64{14})
	wantErr(t, err, "panic", ErrExited, "panic: boom in a goroutine", "exit status 2")
	if v, err := o.Evaluate(ctx, []float64{1}); err != nil || v != 2 {
		t.Fatalf("after restart: %v, %v", v, err)
	}
}

// generous is the call limit of the calls in the hang and loop tests that
// must not time out (Info, the call after the restart): a loaded machine
// can take far longer than the short limit the hanging call gets.
const generous = 30 * time.Second

// generousObjective opens dir with generous call limits and returns the
// objective name from it: Info runs under them, and the test then sets the
// short limit it exercises on r.opts (the test owns r; no call is in
// flight while the options change).
func generousObjective(t *testing.T, dir, name string) (*Registry, *Objective) {
	t.Helper()
	r := open(t, dir, Options{EvalTimeout: generous, ScriptTimeout: generous})
	o, err := r.Objective(ctxT(t), name)
	if err != nil {
		t.Fatal(err)
	}
	return r, o
}

func TestContainHangsPastTimeout(t *testing.T) {
	r, o := generousObjective(t, pluginsDir(t, []string{"hang"}, nil), "hang")
	ctx := ctxT(t)
	r.opts.EvalTimeout = 300 * time.Millisecond // the hanging call only
	start := time.Now()
	_, err := o.Evaluate(ctx, []float64{13})
	wantErr(t, err, "hang", ErrTimeout, "no answer within 300ms", "killed")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("timed-out call took %v", d)
	}
	r.opts.EvalTimeout = generous
	if v, err := o.Evaluate(ctx, []float64{3}); err != nil || v != -3 {
		t.Fatalf("after restart: %v, %v", v, err)
	}
}

func TestContainNaNInf(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"nan"}, nil), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "nan")
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Evaluate(ctx, []float64{-0.5})
	wantErr(t, err, "nan", ErrBadValue, "NaN")
	_, err = o.Evaluate(ctx, []float64{0.5})
	wantErr(t, err, "nan", ErrBadValue, "+Inf")
	if v, err := o.Evaluate(ctx, []float64{0}); err != nil || v != 0 {
		t.Fatalf("finite value: %v, %v", v, err)
	}
}

func TestContainMalformedSpace(t *testing.T) {
	for name, frag := range map[string]string{
		"badbounds": "Low 1 must be less than High 1",
		"badkind":   "unknown kind 7",
		"noparams":  "no parameters",
	} {
		t.Run(name, func(t *testing.T) {
			r := open(t, pluginsDir(t, []string{name}, nil), Options{})
			_, err := r.Objective(ctxT(t), name)
			wantErr(t, err, name, ErrBadSpace, frag)
		})
	}
}

func TestContainScriptPanics(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{"boom.go": "testdata/scripts/panic.go"}), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "boom")
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Evaluate(ctx, []float64{0.9})
	wantErr(t, err, "boom", ErrPanic, "script boom")
	if v, err := o.Evaluate(ctx, []float64{0.25}); err != nil || v != 0.25 {
		t.Fatalf("after panic: %v, %v", v, err)
	}
}

func TestContainScriptLoops(t *testing.T) {
	r, o := generousObjective(t, pluginsDir(t, nil, map[string]string{"loop.go": "testdata/scripts/loop.go"}), "loop")
	ctx := ctxT(t)
	r.opts.EvalTimeout = 0                        // scripts then get ScriptTimeout
	r.opts.ScriptTimeout = 300 * time.Millisecond // the looping call only
	_, err := o.Evaluate(ctx, []float64{0.9})
	wantErr(t, err, "loop", ErrTimeout, "no answer within 300ms")
	r.opts.ScriptTimeout = generous
	if v, err := o.Evaluate(ctx, []float64{0.25}); err != nil || v != 0.25 {
		t.Fatalf("after restart: %v, %v", v, err)
	}
}

// TestScriptEvalTimeout: an objective script gets ScriptTimeout per call
// unless EvalTimeout is set, which then applies instead — also when it is
// the longer one, so a legitimately slow script objective can run.
func TestScriptEvalTimeout(t *testing.T) {
	dir := pluginsDir(t, nil, map[string]string{"slow.go": "testdata/scripts/slow.go"})
	for _, tc := range []struct {
		name         string
		eval, script time.Duration
		wantTimeout  string // "" when the 0.6 s call must succeed
	}{
		{"script default applies", 0, 200 * time.Millisecond, "no answer within 200ms"},
		{"longer eval timeout wins", generous, 200 * time.Millisecond, ""},
		{"shorter eval timeout wins", 200 * time.Millisecond, generous, "no answer within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, o := generousObjective(t, dir, "slow")
			r.opts.EvalTimeout, r.opts.ScriptTimeout = tc.eval, tc.script
			v, err := o.Evaluate(ctxT(t), []float64{0.6})
			if tc.wantTimeout != "" {
				wantErr(t, err, "slow", ErrTimeout, tc.wantTimeout)
				return
			}
			if err != nil || v != 0.6 {
				t.Fatalf("Evaluate = %v, %v; want 0.6", v, err)
			}
		})
	}
}

func TestContainScriptNaN(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{"nanacq.go": "testdata/scripts/nanacq.go"}), Options{})
	ctx := ctxT(t)
	a, err := r.Acquisition(ctx, "nanacq")
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Score(ctx, testPost, [][]float64{{0.5, 0.5}})
	wantErr(t, err, "nanacq", ErrBadValue, "NaN")
}

// TestContainScriptNaNObjective: an objective script returning NaN or −Inf
// gives ErrBadValue for that call, and the script keeps serving.
func TestContainScriptNaNObjective(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{"nanobj.go": "testdata/scripts/nanobj.go"}), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "nanobj")
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Evaluate(ctx, []float64{-0.5})
	wantErr(t, err, "nanobj", ErrBadValue, "NaN")
	_, err = o.Evaluate(ctx, []float64{0})
	wantErr(t, err, "nanobj", ErrBadValue, "-Inf")
	if v, err := o.Evaluate(ctx, []float64{1}); err != nil || v != 0 {
		t.Fatalf("log(1) = %v, %v; want 0", v, err)
	}
}

// TestContainScriptBadOutputs: a script of two outputs returning one value
// gives ErrBadOutput (a malformed result, not a non-finite value), a NaN
// output ErrBadValue naming the output, and the script keeps serving.
func TestContainScriptBadOutputs(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{"badoutputs.go": "testdata/scripts/badoutputs.go"}), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "badoutputs")
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.EvaluateDetail(ctx, []float64{-0.5})
	wantErr(t, err, "badoutputs", ErrBadOutput, "wrong number of outputs: got 1, the objective declares 2")
	if errors.Is(err, ErrBadValue) {
		t.Errorf("a wrong count is also ErrBadValue: %v", err)
	}
	_, err = o.EvaluateDetail(ctx, []float64{0.75})
	wantErr(t, err, "badoutputs", ErrBadValue, `output 1 ("loss") is NaN`)
	res, err := o.EvaluateDetail(ctx, []float64{0.25})
	if err != nil || len(res.Outputs) != 2 || res.Outputs[1] != 0.75 {
		t.Fatalf("good outputs: %+v, %v", res, err)
	}
}

// TestContainScriptMalformedSpace: a script declaring Low ≥ High is
// refused when opened and listed with the parameter and the bounds.
func TestContainScriptMalformedSpace(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{"badspace.go": "testdata/scripts/badspace.go"}), Options{})
	ctx := ctxT(t)
	_, err := r.Objective(ctx, "badspace")
	wantErr(t, err, "badspace", ErrBadSpace, "rate", "Low 2 must be less than High 1")
	list := r.List(ctx)
	if len(list) != 1 || !errors.Is(list[0].Err, ErrBadSpace) || list[0].Info != nil {
		t.Fatalf("List = %+v", list)
	}
}

func TestContainScriptDoesNotCompile(t *testing.T) {
	r := open(t, pluginsDir(t, nil, map[string]string{
		"typeerr.go":  "testdata/scripts/typeerr.go",
		"wrongsig.go": "testdata/scripts/wrongsig.go",
	}), Options{})
	ctx := ctxT(t)
	_, err := r.Objective(ctx, "typeerr")
	wantErr(t, err, "typeerr", ErrStart, "typeerr.go:12")
	_, err = r.Objective(ctx, "wrongsig")
	wantErr(t, err, "wrongsig", ErrStart, "Evaluate has type func([]float64) float64")
}

// TestOneBrokenNeverHidesOthers puts every broken plugin next to healthy
// ones: List reports each broken one with its cause and the healthy ones
// load and evaluate.
func TestOneBrokenNeverHidesOthers(t *testing.T) {
	dir := pluginsDir(t,
		[]string{"objective", "multi", "crashstart", "stdoutjunk", "badbounds", "badkind", "noparams", "suggester"},
		map[string]string{
			"quad.go":     "testdata/scripts/objective.go",
			"exec.go":     "testdata/scripts/exec.go",
			"typeerr.go":  "testdata/scripts/typeerr.go",
			"brokenbuild": "testdata/plugins/brokenbuild",
		})
	// A script with the same name as an executable is reported, not loaded.
	if err := os.Symlink(mustAbs(t, "testdata/scripts/objective.go"), filepath.Join(dir, "objective.go")); err != nil {
		t.Fatal(err)
	}
	r := open(t, dir, Options{CacheDir: t.TempDir()})
	ctx := ctxT(t)
	got := map[string]error{}
	dups := 0
	for _, p := range r.List(ctx) {
		if errors.Is(p.Err, ErrDuplicate) {
			dups++
			continue
		}
		got[p.Name] = p.Err
	}
	if dups != 1 {
		t.Fatalf("%d duplicate-name errors, want 1", dups)
	}
	wantOK := []string{"objective", "multi/up", "multi/down", "quad", "suggester"}
	wantBad := map[string]error{
		"crashstart": ErrStart, "stdoutjunk": ErrHandshake, "badbounds": ErrBadSpace, "badkind": ErrBadSpace,
		"noparams": ErrBadSpace, "exec": ErrRestricted, "typeerr": ErrStart, "brokenbuild": ErrBuild,
	}
	if len(got) != len(wantOK)+len(wantBad) {
		t.Fatalf("List = %v", got)
	}
	for _, n := range wantOK {
		if err, ok := got[n]; !ok || err != nil {
			t.Fatalf("%s: present %v, err %v", n, ok, err)
		}
	}
	for n, cause := range wantBad {
		if !errors.Is(got[n], cause) {
			t.Fatalf("%s: err %v, want %v", n, got[n], cause)
		}
	}
	o, err := r.Objective(ctx, "multi/up")
	if err != nil {
		t.Fatal(err)
	}
	if v, err := o.Evaluate(ctx, []float64{1}); err != nil || v != 2 {
		t.Fatalf("multi/up(1) = %v, %v", v, err)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestContainConcurrentCrash crashes the plugin while 8 callers use it.
// The crash does not say which call caused it, so the calls that were in
// flight are each re-run alone: the crashing call fails with ErrExited,
// every other call succeeds, and the plugin is restarted once per crash
// (once more when the culprit crashes again alone), not once per caller.
func TestContainConcurrentCrash(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"exitmid"}, nil), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "exitmid")
	if err != nil {
		t.Fatal(err)
	}
	const callers, calls = 8, 25
	errs := make(chan error, callers*calls)
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				x := float64(i % 5)
				if c == 3 && i == 10 {
					x = 13 // the crash
				}
				v, err := o.Evaluate(ctx, []float64{x})
				if err == nil && v != 2*x {
					err = fmt.Errorf("f(%v) = %v", x, v)
				}
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if err == nil {
			continue
		}
		failed++
		if !errors.Is(err, ErrExited) {
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d calls failed, want 1 (the crash)", failed)
	}
	if gen := o.p.gen; gen != 2 && gen != 3 {
		t.Fatalf("plugin started %d times, want 2 or 3 (a restart after the crash, and one after the culprit crashed again alone)", gen)
	}
}

// TestEvalTimeoutSparesSetup: EvalTimeout limits evaluations only. Info and
// Configure, which prepare a study (and are replayed after a restart), run
// under SetupTimeout, so a limit far shorter than any call still lets the
// study start and fails only the evaluation.
func TestEvalTimeoutSparesSetup(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"objective"}, nil), Options{EvalTimeout: time.Nanosecond})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "objective")
	if err != nil {
		t.Fatalf("Info under a 1ns eval timeout: %v", err)
	}
	if err := o.Configure(ctx, map[string]string{"offset": "1"}); err != nil {
		t.Fatalf("Configure under a 1ns eval timeout: %v", err)
	}
	_, err = o.Evaluate(ctx, []float64{0.5, 0.5})
	wantErr(t, err, "objective", ErrTimeout, "no answer within 1ns")
	// The restarted process gets the replayed Configure under SetupTimeout.
	r.opts.EvalTimeout = generous
	if _, err := o.Evaluate(ctx, []float64{0.5, 0.5}); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

// A plugin process that crashed, or that the loader killed, leaves no
// Unix socket behind: its go-plugin server removes the file only on a
// graceful exit, and a crash-looping objective left one file per restart
// in $TMPDIR.
func TestRestartsLeaveNoSocket(t *testing.T) {
	r := open(t, pluginsDir(t, []string{"exitmid"}, nil), Options{})
	ctx := ctxT(t)
	o, err := r.Objective(ctx, "exitmid")
	if err != nil {
		t.Fatal(err)
	}
	socket := func() string {
		o.p.mu.Lock()
		defer o.p.mu.Unlock()
		if o.p.cur == nil {
			return ""
		}
		return o.p.cur.socket
	}
	var sockets []string
	for i := range 4 {
		if _, err := o.Evaluate(ctx, []float64{1}); err != nil {
			t.Fatal(err)
		}
		s := socket()
		if fi, err := os.Lstat(s); err != nil || fi.Mode()&os.ModeSocket == 0 {
			t.Fatalf("process %d: socket %q not recorded (%v)", i+1, s, err)
		}
		sockets = append(sockets, s)
		if i < 3 {
			if _, err := o.Evaluate(ctx, []float64{13}); !errors.Is(err, ErrExited) {
				t.Fatalf("crash: %v", err)
			}
		}
	}
	r.Close()
	deadline := time.Now().Add(10 * time.Second) // a crashed process is killed in the background
	for _, s := range sockets {
		for _, err := os.Lstat(s); err == nil; _, err = os.Lstat(s) {
			if time.Now().After(deadline) {
				t.Fatalf("socket %s left behind (of %v)", s, sockets)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
