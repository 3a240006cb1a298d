package loader

import (
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"
)

// Options configures discovery, loading and containment. The zero value is
// ready to use; every field documents its zero-value default.
type Options struct {
	// Logger receives the loader's events and every plugin's log records
	// (tagged plugin=NAME). Nil: discard (the loader never logs through
	// zerolog's global logger).
	Logger *zerolog.Logger

	// EvalTimeout bounds each Evaluate and Suggest call (the CLI's
	// --eval-timeout), objective scripts' included. A plugin that does not
	// answer in time is killed and restarted on the next call. Zero: no
	// limit besides the caller's context for processes, ScriptTimeout for
	// objective scripts.
	EvalTimeout time.Duration
	// SetupTimeout bounds each Info and Configure call, which prepare a
	// study rather than evaluate it: a limit sized for one evaluation (a
	// few milliseconds for a cheap objective) must not fail a study before
	// it starts, and a Configure that loads a data set may take longer than
	// one evaluation. Zero: 60 s.
	SetupTimeout time.Duration
	// ScriptTimeout bounds each call into an objective script when
	// EvalTimeout is zero, and every Score call of an acquisition (script
	// or process). Zero: 10 s.
	ScriptTimeout time.Duration
	// StartTimeout bounds starting a plugin process up to a completed
	// handshake and Describe (not the build of a Go source plugin). Zero: 30 s.
	StartTimeout time.Duration

	// Unrestricted gives Yaegi scripts the whole standard library (os/exec,
	// net, os, unsafe, syscall, ...) instead of the allowlist of pure
	// packages (the CLI's --unrestricted).
	Unrestricted bool

	// Checksums pins plugins by name (the CLI's --plugin-sha256 NAME=HEX):
	// a plugin whose SHA-256 differs is refused. For an executable the hash
	// is of the file (checked by go-plugin's SecureConfig before it runs);
	// for a Go source directory and for a script it is Plugin.SHA256, the
	// hash of its source tree, checked before building or running.
	Checksums map[string]string

	// EnvDeny lists patterns (path.Match syntax, case-insensitive) of
	// environment variables withheld from plugins. Nil: DefaultEnvDeny; an
	// empty non-nil slice passes the whole environment.
	EnvDeny []string
	// EnvAllow names variables passed even if EnvDeny matches them.
	EnvAllow []string

	// CacheDir holds binaries built from Go source plugins, one per hash of
	// their sources; it may be deleted at any time. Empty: the user cache
	// directory's tesbo/plugins (e.g. ~/.cache/tesbo/plugins).
	CacheDir string
	// GoCmd is the go command used to build Go source plugins. Empty: "go"
	// from PATH.
	GoCmd string
}

// DefaultScriptTimeout, DefaultStartTimeout and DefaultSetupTimeout are
// the zero-value defaults of Options.ScriptTimeout, StartTimeout and
// SetupTimeout.
const (
	DefaultScriptTimeout = 10 * time.Second
	DefaultStartTimeout  = 30 * time.Second
	DefaultSetupTimeout  = 60 * time.Second
)

func (o Options) logger() zerolog.Logger {
	if o.Logger != nil {
		return *o.Logger
	}
	return zerolog.Nop()
}

func (o Options) scriptTimeout() time.Duration {
	if o.ScriptTimeout > 0 {
		return o.ScriptTimeout
	}
	return DefaultScriptTimeout
}

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout > 0 {
		return o.StartTimeout
	}
	return DefaultStartTimeout
}

func (o Options) setupTimeout() time.Duration {
	if o.SetupTimeout > 0 {
		return o.SetupTimeout
	}
	return DefaultSetupTimeout
}

func (o Options) envDeny() []string {
	if o.EnvDeny == nil {
		return DefaultEnvDeny
	}
	return o.EnvDeny
}

func (o Options) cacheDir() string {
	if o.CacheDir != "" {
		return o.CacheDir
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "tesbo", "plugins")
	}
	return filepath.Join(os.TempDir(), "tesbo-plugins-cache")
}

func (o Options) goCmd() string {
	if o.GoCmd != "" {
		return o.GoCmd
	}
	return "go"
}

// DefaultDir is the plugins directory used when none is given: $TESBO_PLUGINS
// if set, else ./plugins.
func DefaultDir() string {
	if d := os.Getenv("TESBO_PLUGINS"); d != "" {
		return d
	}
	return "plugins"
}
