// Command tesbo-host runs batch Bayesian optimization studies: it loads an
// objective from a plugins directory, runs the BO loop of package host with
// an acquisition (TES by default), stores every trial in a SQLite study
// database, and resumes interrupted studies.
//
//	tesbo-host run      --objective NAME [--acq NAME] [--batch N|auto] [--iters N] ...
//	tesbo-host resume   --db PATH --study NAME [--iters N] [--json]
//	tesbo-host plugins  [--plugins DIR]
//	tesbo-host bench    ...
//	tesbo-host serve    --db PATH [--addr 127.0.0.1:8080] [--token T]
//	tesbo-host eval     --objective NAME [--param k=v]... [--seed S]   (JSON lines)
//
// Exit status: 0 on success, 2 for bad input (flags, names, database) and
// for a study another process is running (its lease is held), 1 when a run
// fails, 128+signal when interrupted by SIGINT/SIGTERM (the study can be
// resumed).
package main

import (
	"errors"
	"fmt"
	"github.com/tesbo/tesbo/internal/safetext"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tesbo/tesbo/host"
	"github.com/tesbo/tesbo/host/loader"
	_ "github.com/tesbo/tesbo/tes" // registers the tes, tes-ep and tes-sp acquisitions
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// usageError marks bad input: reported on one line, exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// interruptedError carries the exit code of an interrupted run.
type interruptedError struct {
	err  error
	code int
}

func (e interruptedError) Error() string { return e.err.Error() }
func (e interruptedError) Unwrap() error { return e.err }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "tesbo-host",
		Short: "Batch Bayesian optimization with Trusted-Maximizers Entropy Search",
		Long: `tesbo-host runs batch Bayesian optimization studies on objectives loaded
from a plugins directory (executables, Go source directories or Yaegi
scripts; see 'tesbo-host plugins'). Studies are stored in a SQLite file (or
PostgreSQL, shared by workers: 'tesbo-host worker') and survive Ctrl-C,
SIGTERM and kill -9: 'tesbo-host resume' continues them.

Exit status: 0 success, 2 bad input or a study in use by another process,
1 run failure, 130/143 interrupted.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd(), newResumeCmd(), newPluginsCmd(), newBenchCmd(), newTrialsCmd(), newWorkerCmd(), newServeCmd(), newEvalCmd())
	return root
}

func main() {
	hideSecrets()
	loader.RunScriptRunnerIfRequested() // serves a script and exits when run as the loader's script runner
	os.Exit(execute(os.Args[1:]))
}

// execute runs the command line and maps its error to an exit code,
// printing the error on stderr (bad input on one line).
func execute(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ie interruptedError
	if errors.As(err, &ie) {
		printError(ie.err.Error())
		return ie.code
	}
	if held := host.AsLeaseHeld(err); held != nil {
		// Another process runs the study: say who, and nothing else.
		printError(held.Error())
		return exitUsage
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) || badDatabase(err) {
		printError(oneLine(err.Error()))
		return exitUsage
	}
	printError(err.Error())
	return exitFailure
}

// printError prints the command's error on stderr, escaped: it may quote
// a plugin's words (an Info error, a build's output), which must not act
// on the terminal (set its title, clear it). Its lines stay lines (a
// build's file:line output).
func printError(msg string) {
	fmt.Fprintln(os.Stderr, "tesbo-host:", safetext.TerminalLines(msg))
}

// badDatabase recognizes a --db that is not a readable tesbo study
// database (corrupt, another program's, a newer tesbo's), wherever the
// command found out: bad input, like a bad flag, whether it showed at
// open or at the first read of a study. So is a study whose objective
// has since changed its space or outputs.
func badDatabase(err error) bool {
	return errors.Is(err, host.ErrCorrupt) || errors.Is(err, host.ErrNotTesbo) || errors.Is(err, host.ErrNewerSchema) ||
		errors.Is(err, host.ErrObjectiveChanged)
}

// isCobraUsage recognizes cobra's own argument errors (unknown command,
// unexpected arguments), which it does not route through the flag error
// function.
func isCobraUsage(err error) bool {
	s := err.Error()
	return strings.HasPrefix(s, "unknown command") || strings.HasPrefix(s, "accepts ") ||
		strings.Contains(s, "unknown flag") || strings.Contains(s, "required flag")
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return strings.Join(lines, " | ")
}
