package loader

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"

	"github.com/hashicorp/go-plugin"

	"github.com/tesbo/tesbo/internal/pluginwire"
)

// startCommand is the plugin's command, ready to start: its source
// verified, its environment filtered (secrets withheld, the memory limit
// applied) and, for a pinned executable, the checksum go-plugin verifies.
func (u *unit) startCommand(ctx context.Context) (*exec.Cmd, *plugin.SecureConfig, error) {
	r := u.r
	if err := u.verifySource(); err != nil {
		return nil, nil, err
	}
	cmd, err := u.command(ctx)
	if err != nil {
		return nil, nil, err
	}
	env := pluginEnv(os.Environ(), r.opts.envDeny(), r.opts.EnvAllow)
	cmd.Env = append(env, cmd.Env...)
	if lim := r.opts.MemoryLimit; lim > 0 {
		// Later entries win: the limit overrides a GOMEMLIMIT of the host's.
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMEMLIMIT=%d", lim/10*9))
	}
	want := u.pin
	if want == "" || u.source != SourceExecutable {
		return cmd, nil, nil
	}
	sum, err := hex.DecodeString(want)
	if err != nil || len(sum) != sha256.Size {
		return nil, nil, &Error{Plugin: u.name, Op: "start", Cause: ErrChecksum, Err: fmt.Errorf("checksum %q is not 64 hex digits", want)}
	}
	return cmd, &plugin.SecureConfig{Checksum: sum, Hash: sha256.New()}, nil
}

// newClient is the go-plugin client of one plugin process, its stdout
// logged as a mistake and its stderr kept in tail and logged.
//
// Not Managed: go-plugin's managed clients live in a process-wide list
// that is never pruned (one entry per restart) and that CleanupClients
// kills wholesale, other registries' plugins included. The registry owns
// its processes instead: a restart kills the old client, Close kills
// every current one, and on Linux the group's watcher (procGroup) kills
// them if the host dies without Close.
func (r *Registry) newClient(name string, cmd *exec.Cmd, secure *plugin.SecureConfig, stderr *tail, logs procLogs) *plugin.Client {
	logger := r.opts.logger().With().Str("plugin", name).Logger()
	return plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginwire.Handshake,
		VersionedPlugins: pluginwire.ClientSets(),
		Cmd:              cmd,
		SecureConfig:     secure,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true,
		StartTimeout:     r.opts.startTimeout(),
		Logger:           logs.hclog,
		Stderr:           stderr,
		SyncStdout: &lineLogger{limit: logs.stdout, emit: func(line string) {
			logger.Warn().Str("stdout", line).Msg("plugin wrote to stdout (ignored; plugins should log to stderr)")
		}},
		SyncStderr: &lineLogger{limit: logs.stderr, emit: func(line string) {
			stderr.add(line)
			logger.Info().Str("stderr", line).Msg("plugin stderr")
		}},
	})
}
