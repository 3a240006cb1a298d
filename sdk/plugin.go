package sdk

import (
	"context"
	"os"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

// ProtocolVersion is the go-plugin application protocol version this SDK
// speaks (the services in sdk/proto). The host lists every version it
// supports (go-plugin VersionedPlugins) and the plugin picks the highest
// one both know, so the protocol can evolve without breaking old plugins.
const ProtocolVersion = 1

// Handshake is the go-plugin handshake shared by the host and plugins. The
// magic cookie is not a security measure: it only makes a plugin binary
// started by hand say that it must be started by tesbo-host.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   "TESBO_PLUGIN_MAGIC_COOKIE",
	MagicCookieValue: "7c1e4f0a-tesbo-plugin-v1",
}

// PluginName is the go-plugin name under which every tesbo plugin serves
// its services; the host dispenses it to get a *PluginConn.
const PluginName = "tesbo"

// PluginSets returns the go-plugin plugin sets by protocol version, for the
// host's go-plugin ClientConfig.VersionedPlugins. Plugin authors never need
// it.
func PluginSets() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: {PluginName: &grpcPlugin{}}}
}

// PluginConn is what the host gets when it dispenses PluginName from a
// go-plugin client: the gRPC connection to the plugin (mTLS) and the broker
// for callbacks (the Posterior service of acquisition plugins).
type PluginConn struct {
	Conn   *grpc.ClientConn
	Broker *plugin.GRPCBroker
}

// grpcPlugin is the go-plugin glue: on the plugin side it registers the
// services of srv; on the host side it hands out a *PluginConn.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	srv *server
}

func (p *grpcPlugin) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	p.srv.broker = b
	pb.RegisterPluginServer(s, &describeServer{srv: p.srv})
	switch {
	case p.srv.objectives != nil:
		pb.RegisterObjectiveServer(s, &objectiveServer{srv: p.srv})
	case p.srv.suggester != nil:
		pb.RegisterSuggesterServer(s, &suggesterServer{srv: p.srv})
	case p.srv.acquisition != nil:
		pb.RegisterAcquisitionServer(s, &acquisitionServer{srv: p.srv})
	}
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, b *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &PluginConn{Conn: c, Broker: b}, nil
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
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]plugin.PluginSet{ProtocolVersion: {PluginName: &grpcPlugin{srv: s}}},
		GRPCServer:       plugin.DefaultGRPCServer,
		Logger:           log,
	})
}
