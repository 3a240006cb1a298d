package loader

import (
	"context"
	"fmt"
	"os"

	"github.com/tesbo/tesbo/sdk"
)

// Scripts run in a child process: the host's own executable re-executed in
// "script runner" mode, which this package's init function enters when the
// environment asks for it (and only together with the go-plugin magic
// cookie, so a stray variable cannot trigger it). The runner compiles the
// script once with Yaegi and serves it with sdk.ServeObjective or
// sdk.ServeAcquisition, so a script is contained, timed out, killed and
// restarted exactly like a compiled plugin. Any program that imports this
// package (tesbo-host, an embedding program, a test binary) can therefore
// run scripts without a separate runner binary.
const (
	envRunnerScript       = "TESBO_SCRIPT_RUNNER"
	envRunnerKind         = "TESBO_SCRIPT_KIND"
	envRunnerUnrestricted = "TESBO_SCRIPT_UNRESTRICTED"
)

func init() {
	p := os.Getenv(envRunnerScript)
	if p == "" || os.Getenv(sdk.Handshake.MagicCookieKey) != sdk.Handshake.MagicCookieValue {
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
