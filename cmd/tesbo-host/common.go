package main

import (
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/tesbo/tesbo/host/loader"
	"golang.org/x/term"
)

// common holds the flags every study command shares.
type common struct {
	plugins      string
	json         bool
	logLevel     string
	unrestricted bool
	checksums    []string
	envAllow     []string
	evalTimeout  time.Duration
	pluginMemory string
}

// pluginEnvHelp describes --plugin-env (every command that starts plugins).
const pluginEnvHelp = "NAME: pass environment variable NAME to plugins although the secrets deny-list (*TOKEN*, *SECRET*, AWS_*, ...) withholds it (repeatable)"

func (c *common) register(cmd *cobra.Command, pluginsHelp string) {
	f := cmd.Flags()
	f.StringVar(&c.plugins, "plugins", "", pluginsHelp)
	f.BoolVar(&c.json, "json", false, "print one JSON record per BO iteration on stdout (logs stay on stderr)")
	f.StringVar(&c.logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	f.BoolVar(&c.unrestricted, "unrestricted", false, "give Yaegi scripts the whole standard library (os/exec, net, file writes, ...)")
	f.StringArrayVar(&c.checksums, "plugin-sha256", nil, "NAME=HEX: refuse to run unless plugin NAME (an entry, or an objective as --objective names it) has SHA-256 HEX (repeatable; see 'tesbo-host plugins')")
	f.StringArrayVar(&c.envAllow, "plugin-env", nil, pluginEnvHelp)
	f.StringVar(&c.pluginMemory, "plugin-memory", "", pluginMemoryHelp)
}

// minPluginMemory is the least --plugin-memory: a Go plugin's runtime
// alone reserves a few MiB, and below this every plugin fails at start-up
// with an error that does not name the limit.
const minPluginMemory = 32 << 20

// pluginMemoryHelp describes --plugin-memory (every command that starts
// plugins).
const pluginMemoryHelp = "SIZE: memory limit of each plugin process, e.g. 2GiB (Linux: RLIMIT_DATA, and GOMEMLIMIT for Go plugins); a plugin past it dies alone and its call fails (at least 32MiB; default: none)"

// pluginsDir resolves the plugins directory: the flag, else
// $TESBO_PLUGINS, else fallback (a resumed study's stored directory),
// else ./plugins. What the user set wins over what a database says: a
// database from elsewhere must not choose, unasked, the programs that run.
func (c *common) pluginsDir(fallback string) string {
	switch {
	case c.plugins != "":
		return c.plugins
	case os.Getenv("TESBO_PLUGINS") != "":
		return os.Getenv("TESBO_PLUGINS")
	case fallback != "":
		return fallback
	}
	return loader.DefaultDir()
}

// logger builds the stderr logger: console format on a terminal, JSON
// otherwise.
func (c *common) logger() (zerolog.Logger, error) {
	lvl, err := zerolog.ParseLevel(strings.ToLower(c.logLevel))
	if err != nil || c.logLevel == "" {
		return zerolog.Nop(), usagef("bad --log-level %q: use debug, info, warn or error", c.logLevel)
	}
	var l zerolog.Logger
	if term.IsTerminal(int(os.Stderr.Fd())) {
		l = zerolog.New(zerolog.ConsoleWriter{Out: os.Stderr, TimeFormat: "15:04:05"}).Level(lvl).With().Timestamp().Logger()
	} else {
		l = zerolog.New(os.Stderr).Level(lvl).With().Timestamp().Logger()
	}
	return l, nil
}

func (c *common) loaderOptions(log zerolog.Logger) (loader.Options, error) {
	o := loader.Options{Logger: log, Unrestricted: c.unrestricted, EvalTimeout: c.evalTimeout}
	if c.pluginMemory != "" {
		n, err := loader.ParseSize(c.pluginMemory)
		if err != nil || n <= 0 {
			return o, usagef("bad --plugin-memory %q: want a positive size such as 2GiB or 512MiB", c.pluginMemory)
		}
		if n < minPluginMemory {
			return o, usagef("bad --plugin-memory %q: at least 32MiB, the least a plugin's runtime starts in (e.g. 512MiB)", c.pluginMemory)
		}
		o.MemoryLimit = n
	}
	for _, name := range c.envAllow {
		if name == "" || strings.ContainsAny(name, "= ") {
			return o, usagef("bad --plugin-env %q: want the name of an environment variable", name)
		}
		o.EnvAllow = append(o.EnvAllow, name)
	}
	var err error
	o.Checksums, err = parseChecksums(c.checksums)
	return o, err
}

// sha256RE matches a SHA-256 in hex.
var sha256RE = regexp.MustCompile(`^[0-9a-fA-F]{64}$`)

// parseChecksums parses --plugin-sha256 NAME=HEX flags (NAME non-empty:
// a plugin entry or an objective in the form --objective takes; HEX 64 hex
// digits, lower-cased; a later flag for the same NAME wins). No flags give
// a nil map.
func parseChecksums(kvs []string) (map[string]string, error) {
	var out map[string]string
	for _, kv := range kvs {
		name, hex, ok := strings.Cut(kv, "=")
		if !ok || name == "" || hex == "" {
			return nil, usagef("bad --plugin-sha256 %q: want NAME=HEX", kv)
		}
		if !sha256RE.MatchString(hex) {
			return nil, usagef("bad --plugin-sha256 %q: HEX must be 64 hex digits (the SHA-256 'tesbo-host plugins' prints)", kv)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = strings.ToLower(hex)
	}
	return out, nil
}
