package loader

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// Options configures discovery, loading and containment. The zero value is
// ready to use; every field documents its zero-value default.
type Options struct {
	// Logger receives the loader's events and every plugin's log records
	// (tagged plugin=NAME). The zero value discards them (the module's
	// logging convention, see package tesbo).
	Logger zerolog.Logger

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

	// MemoryLimit caps the memory of each plugin process, in bytes (the
	// CLI's --plugin-memory), so that a runaway plugin fails alone instead
	// of taking the machine: on Linux every process of the plugin's process
	// group gets RLIMIT_DATA = MemoryLimit once the handshake is done
	// (allocations beyond it fail: a Go plugin dies with "fatal error:
	// runtime: out of memory", Python raises MemoryError), and Go plugins
	// (scripts' runner included) get GOMEMLIMIT at 90% of it, so their
	// garbage collector works harder before the hard limit. RLIMIT_DATA
	// rather than RLIMIT_AS: a Go program reserves about 1.7 GB of address
	// space it never uses, so an address-space limit would stop plugins
	// from starting at all under a useful cap. Zero: no limit.
	MemoryLimit int64

	// Unrestricted gives Yaegi scripts the whole standard library (os/exec,
	// net, os, unsafe, syscall, ...) instead of the allowlist of pure
	// packages (the CLI's --unrestricted).
	Unrestricted bool

	// Checksums pins plugins by name (the CLI's --plugin-sha256 NAME=HEX):
	// a plugin whose SHA-256 differs is refused. NAME is a plugin entry
	// (Plugin.Unit) or an objective it serves in the form ENTRY/NAME
	// ("synthetic/branin" pins the entry "synthetic"); a NAME matching no
	// entry, a HEX that is not 64 hex digits or two names pinning one entry
	// differently make the registry refuse everything (see
	// Registry.VerifyChecksums, which checks every pin up front). For an
	// executable the hash is of the file (checked again by go-plugin's
	// SecureConfig before it runs); for a Go source directory and for a
	// script it is Plugin.SHA256, the hash of its source tree, checked
	// before building or running.
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

func (o Options) logger() zerolog.Logger { return o.Logger }

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

// ParseSize parses a memory size: a number of bytes, optionally with a
// binary (KiB, MiB, GiB, TiB) or decimal (kB, MB, GB, TB; K, M, G, T are
// taken as binary) suffix, e.g. "2GiB", "512M", "1073741824".
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if !ok || num == "" {
		return 0, fmt.Errorf("bad size %q: want a number of bytes with an optional unit, e.g. 2GiB or 512MiB", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v*float64(mult) >= math.MaxInt64 {
		return 0, fmt.Errorf("bad size %q: want a number of bytes with an optional unit, e.g. 2GiB or 512MiB", s)
	}
	return int64(v * float64(mult)), nil
}

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// FormatSize writes n bytes in the largest binary unit in which it is at
// least 1, to two decimals ("512 MiB", "1.5 GiB").
func FormatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + " " + units[u]
}
