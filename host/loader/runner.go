package loader

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/tesbo/tesbo/internal/pluginwire"
	"github.com/tesbo/tesbo/sdk"
)

// Scripts run in a child process: the host's own executable re-executed in
// "script runner" mode, which RunScriptRunnerIfRequested enters when the
// environment asks for it (and only together with the go-plugin magic
// cookie, so a stray variable cannot trigger it). The runner compiles the
// script with Yaegi (once per concurrent call, see scriptPool) and serves it with sdk.ServeObjective or
// sdk.ServeAcquisition, so a script is contained, timed out, killed and
// restarted exactly like a compiled plugin. Any program that calls
// RunScriptRunnerIfRequested first thing in main (tesbo-host, an embedding
// program, a test binary's TestMain) can therefore run scripts without a
// separate runner binary.
const (
	envRunnerScript       = "TESBO_SCRIPT_RUNNER"
	envRunnerKind         = "TESBO_SCRIPT_KIND"
	envRunnerUnrestricted = "TESBO_SCRIPT_UNRESTRICTED"
)

// runnerReady records that this program calls RunScriptRunnerIfRequested,
// so that re-executing it serves a script instead of running its main.
var runnerReady atomic.Bool

// RunScriptRunnerIfRequested serves a script plugin and exits when this
// process was started by the loader as a script runner; otherwise it
// returns at once. Call it first thing in main (and in TestMain of a test
// binary that loads scripts): the loader runs a script by re-executing the
// program's own executable, which must then serve the script rather than
// run its main again. The call also enables script plugins in this
// process; without it they fail to start with an error saying so.
// Importing the package has no side effect.
func RunScriptRunnerIfRequested() {
	runnerReady.Store(true)
	p := os.Getenv(envRunnerScript)
	if p == "" || os.Getenv(pluginwire.Handshake.MagicCookieKey) != pluginwire.Handshake.MagicCookieValue {
		return
	}
	os.Exit(runScript(p, os.Getenv(envRunnerUnrestricted) == "true"))
}

// runScript is the script runner's main.
func runScript(p string, unrestrictedOK bool) int {
	src, err := readScript(p)
	var s *Script
	if err == nil {
		s, err = compileSource(src, unrestrictedOK)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tesbo script runner: %s: %v\n", p, err)
		return 1
	}
	pool := &scriptPool{src: src, unrestricted: unrestrictedOK, idle: []*Script{s}}
	switch s.Kind {
	case KindObjective:
		if s.EvaluateOutputs != nil {
			sdk.ServeObjective(scriptMultiObjective{scriptObjective{pool}})
			break
		}
		sdk.ServeObjective(scriptObjective{pool})
	case KindAcquisition:
		sdk.ServeAcquisition(scriptAcquisition{pool})
	default:
		fmt.Fprintf(os.Stderr, "tesbo script runner: %s: not an objective or acquisition script\n", p)
		return 1
	}
	return 0
}

// scriptPool gives every concurrent call its own interpreter. Yaegi is not
// safe for one interpreted function running on several goroutines at once:
// two concurrent Evaluate calls of a script that waits in a select on
// time.After and ctx.Done() hung within a few dozen calls (Yaegi
// v0.16.1), and the host's batches call Evaluate concurrently. A call
// takes an idle compiled copy of the script, or compiles one when none is
// idle, and gives it back after, so the runner holds as many copies as
// the most calls it has served at once. Package-level variables are
// therefore shared by successive calls but not between concurrent ones.
// Every copy compiles the sources the runner read when it started.
type scriptPool struct {
	src          *scriptSource
	unrestricted bool
	mu           sync.Mutex
	idle         []*Script
}

// get returns an idle copy of the script, compiling one if none is idle.
func (p *scriptPool) get() (*Script, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		s := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return s, nil
	}
	p.mu.Unlock()
	s, err := compileSource(p.src, p.unrestricted)
	if err != nil {
		return nil, fmt.Errorf("compile another copy of the script for a concurrent call: %w", err)
	}
	return s, nil
}

func (p *scriptPool) put(s *Script) {
	p.mu.Lock()
	p.idle = append(p.idle, s)
	p.mu.Unlock()
}

type scriptObjective struct{ pool *scriptPool }

func (o scriptObjective) Info(context.Context) (sdk.Info, error) {
	s, err := o.pool.get()
	if err != nil {
		return sdk.Info{}, err
	}
	defer o.pool.put(s)
	return s.Info(), nil
}

func (o scriptObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	s, err := o.pool.get()
	if err != nil {
		return 0, err
	}
	defer o.pool.put(s)
	return s.Evaluate(ctx, x)
}

// scriptMultiObjective serves a script of several outputs (its
// EvaluateOutputs); Evaluate is never called for it.
type scriptMultiObjective struct{ scriptObjective }

func (o scriptMultiObjective) EvaluateOutputs(ctx context.Context, x []float64) ([]float64, error) {
	s, err := o.pool.get()
	if err != nil {
		return nil, err
	}
	defer o.pool.put(s)
	return s.EvaluateOutputs(ctx, x)
}

type scriptAcquisition struct{ pool *scriptPool }

func (a scriptAcquisition) Score(_ context.Context, p sdk.Posterior, batch [][]float64) (float64, error) {
	s, err := a.pool.get()
	if err != nil {
		return 0, err
	}
	defer a.pool.put(s)
	return s.Score(p, batch), nil
}
