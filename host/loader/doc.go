// Package loader discovers, starts, talks to, contains and stops tesbo
// plugins: the host side of package sdk.
//
// # Discovery
//
// Discover scans one plugins directory (not recursively). Each entry is
//
//   - an executable file speaking the go-plugin handshake (a binary whose
//     main calls sdk.ServeObjective, ServeObjectives, ServeSuggester or
//     ServeAcquisition, or any program serving sdk/proto, e.g. Python);
//   - a directory whose root is a Go main package with func main: built on
//     first use with the user's go command, in the directory itself so that
//     the enclosing go.mod gives the module context, into a cache keyed by a
//     hash of its sources and of the main-module packages it imports (its
//     sub-packages are its own business and never reported separately);
//   - a Yaegi script: a .go file, or a directory whose package is not a main
//     program, defining Info and Evaluate (objective) or Score (acquisition).
//
// Entries starting with "." or "_", testdata, other files and directories
// without Go files are ignored. Discovery reads only regular files (a
// symlink must resolve to one), opening them so that a named pipe never
// blocks, and scripts only up to MaxScriptFileSize per file and
// MaxScriptSize per directory; any other entry is reported as broken with
// the reason. Nothing starts until it is used: List starts
// everything (for `tesbo-host plugins`), Objective/Acquisition/Suggester
// start what they need. A broken entry is reported with its cause and never
// hides the others.
//
// # Processes and containment
//
// Every plugin runs as a child process of a go-plugin client (gRPC only,
// versioned protocol, automatic mutual TLS, a start timeout) that the
// Registry owns: it kills the client on restart and on Close, rather than
// leaving it to go-plugin's process-wide CleanupClients. Scripts too: the
// host's own executable is re-executed as a script runner, which compiles
// the script once with Yaegi and serves it through the sdk, so a script
// that panics, loops or returns NaN is contained exactly like a compiled
// plugin. A program that loads scripts calls RunScriptRunnerIfRequested
// first thing in main (the re-executed copy serves the script there);
// importing the package has no side effect.
//
// A call that exceeds its timeout kills the process (it may never return);
// the calls running beside it in the same process fail with
// ErrNeighbourFault (Error.NeighbourFault), which says they can be re-run
// at once: host's evaluation loop does so without counting an attempt. A
// process that exits on its own while several calls run does not say which
// call crashed it, so each of them is re-run alone: the culprit crashes
// again and reports ErrExited, its neighbours complete. A process that died
// is restarted by the next call, and Configure parameters are replayed to
// it. Evaluate and Suggest calls run under Options.EvalTimeout, Info and
// Configure under Options.SetupTimeout. Panics inside a Go plugin's handlers are
// recovered by the sdk and reported as ErrPanic; a crash is ErrExited with
// the exit status and the tail of the plugin's stderr; NaN/Inf results,
// malformed spaces, wrong dimensions and out-of-space suggestions are
// refused. Every error is an *Error naming the plugin, the operation and a
// cause matchable with errors.Is; for a crash it leads with the first fatal
// line of the plugin's stderr (Error.Fatal). Options.MemoryLimit caps each
// plugin's memory (RLIMIT_DATA on Linux, GOMEMLIMIT for Go plugins), so a
// runaway plugin dies alone.
//
// No child outlives the host: Close kills every process; on Linux each
// plugin runs in a process group of its own, killed as a whole (a wrapper
// script's children too). The group is led by a watcher (a /bin/sh started
// before the plugin joins its group) that holds a pipe only the host can
// write to, and kills the group when the pipe closes: when the host exits
// or is killed, SIGKILL included, so what the plugin forked dies with it,
// not only the plugin (which also gets PR_SET_PDEATHSIG=SIGKILL). A child
// that leaves the group (setsid) is out of reach.
//
// # Security
//
// Options.Checksums pins plugins by SHA-256 (go-plugin's SecureConfig for
// executables; the source-tree hash for Go directories and scripts), by
// entry name or as ENTRY/OBJECTIVE; it fails closed: a pin that names no
// entry refuses everything, and Registry.VerifyChecksums checks every pin
// before anything runs.
// Plugins get the host's environment minus DefaultEnvDeny (values that
// are URLs with a password, and names holding
// PASS, KEY, SECRET, TOKEN, CREDENTIAL, AUTH or the word PAT, PostgreSQL's
// PG* variables, cloud accounts; configurable). Scripts see only
// AllowedScriptImports of the standard library unless Options.Unrestricted.
//
// # Logging
//
// go-plugin's records and the hclog JSON lines plugins write to stderr are
// re-logged to Options.Logger (zerolog) with plugin=NAME; lines written to
// stdout after the handshake are logged as warnings. Each stream of a
// plugin process is re-logged at most 50 lines a second after a burst of
// 200, with a summary of the lines suppressed, each line cut to 4 KiB.
package loader
