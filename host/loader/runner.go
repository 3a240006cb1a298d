package loader

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/tesbo/tesbo/internal/pluginwire"
	"github.com/tesbo/tesbo/sdk"
)

// Scripts run in a child process: the host's own executable re-executed in
// "script runner" mode, which RunScriptRunnerIfRequested enters when the
// environment asks for it (and only together with the go-plugin magic
// cookie, so a stray variable cannot trigger it). The runner compiles the
// script once with Yaegi and serves it with sdk.ServeObjective or
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
	s, err := CompileScript(p, unrestrictedOK)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tesbo script runner: %s: %v\n", p, err)
		return 1
	}
	switch s.Kind {
	case KindObjective:
		sdk.ServeObjective(scriptObjective{s})
	case KindAcquisition:
		sdk.ServeAcquisition(scriptAcquisition{s})
	default:
		fmt.Fprintf(os.Stderr, "tesbo script runner: %s: not an objective or acquisition script\n", p)
		return 1
	}
	return 0
}

type scriptObjective struct{ s *Script }

func (o scriptObjective) Info(context.Context) (sdk.Info, error) { return o.s.Info(), nil }
func (o scriptObjective) Evaluate(ctx context.Context, x []float64) (float64, error) {
	return o.s.Evaluate(ctx, x)
}

type scriptAcquisition struct{ s *Script }

func (a scriptAcquisition) Score(_ context.Context, p sdk.Posterior, batch [][]float64) (float64, error) {
	return a.s.Score(p, batch), nil
}
