package sdk

import (
	"os"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/tesbo/tesbo/internal/pluginwire"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// registerServices returns the registration of srv's gRPC services (the
// plugin side of the protocol in sdk/proto).
func registerServices(srv *server) pluginwire.Register {
	return func(b *plugin.GRPCBroker, s *grpc.Server) {
		srv.broker = b
		pb.RegisterPluginServer(s, &describeServer{srv: srv})
		switch {
		case srv.objectives != nil:
			pb.RegisterObjectiveServer(s, &objectiveServer{srv: srv})
		case srv.suggester != nil:
			pb.RegisterSuggesterServer(s, &suggesterServer{srv: srv})
		case srv.acquisition != nil:
			pb.RegisterAcquisitionServer(s, &acquisitionServer{srv: srv})
		}
	}
}

var (
	loggerOnce sync.Once
	logger     hclog.Logger
)

// Logger returns the plugin's logger: hclog JSON lines on the process's
// original stderr, which the host parses and re-logs (zerolog, stderr)
// tagged with the plugin's name. The level comes from TESBO_PLUGIN_LOG_LEVEL
// (trace, debug, info, warn, error; default info). Plugins must never write
// to stdout before serving: stdout carries the go-plugin handshake.
func Logger() hclog.Logger {
	loggerOnce.Do(func() {
		level := hclog.LevelFromString(strings.TrimSpace(os.Getenv("TESBO_PLUGIN_LOG_LEVEL")))
		if level == hclog.NoLevel {
			level = hclog.Info
		}
		logger = hclog.New(&hclog.LoggerOptions{
			Name:       "plugin",
			Level:      level,
			Output:     os.Stderr,
			JSONFormat: true,
		})
	})
	return logger
}

// serve runs the go-plugin server for s and returns when the host closes
// the plugin. It must create the logger before plugin.Serve replaces
// os.Stderr with its stdio stream.
func serve(s *server) {
	log := Logger()
	s.log = log
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  pluginwire.Handshake,
		VersionedPlugins: pluginwire.ServerSets(registerServices(s)),
		GRPCServer:       grpcServer,
		Logger:           log,
	})
}

// maxRecvFromHost bounds a request from the host. gRPC's default, 4 MiB,
// is less than a Score request for a batch of the host's largest size
// (1000 points: their joint posterior alone is 8 MB).
const maxRecvFromHost = 64 << 20

func grpcServer(opts []grpc.ServerOption) *grpc.Server {
	return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(maxRecvFromHost))...)
}
