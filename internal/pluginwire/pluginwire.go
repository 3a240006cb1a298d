// Package pluginwire is the go-plugin and gRPC glue shared by the plugin
// side (package sdk's Serve functions) and the host side (host/loader) of
// tesbo's plugin protocol: the handshake, the plugin sets, the connection
// the host dispenses, and the point conversions. It is internal so that
// sdk's public surface holds only what a plugin author calls.
package pluginwire

import (
	"context"
	"errors"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

// ProtocolVersion is the go-plugin application protocol version (the
// services in sdk/proto). The host lists every version it supports
// (go-plugin VersionedPlugins) and the plugin picks the highest one both
// know, so the protocol can evolve without breaking old plugins.
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
// its services; the host dispenses it to get a *Conn.
const PluginName = "tesbo"

// Conn is what the host gets when it dispenses PluginName from a go-plugin
// client: the gRPC connection to the plugin (mTLS) and the broker for
// callbacks (the Posterior service of acquisition plugins).
type Conn struct {
	Conn   *grpc.ClientConn
	Broker *plugin.GRPCBroker
}

// Register registers a plugin's gRPC services on s; the broker serves the
// callbacks the plugin makes to the host.
type Register func(b *plugin.GRPCBroker, s *grpc.Server)

// grpcPlugin is the go-plugin glue: on the plugin side it registers the
// services (register), on the host side it hands out a *Conn.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	register Register
}

func (p *grpcPlugin) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	if p.register == nil {
		return errors.New("pluginwire: the host's plugin set serves nothing")
	}
	p.register(b, s)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, b *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &Conn{Conn: c, Broker: b}, nil
}

// ClientSets returns the plugin sets by protocol version for the host's
// go-plugin ClientConfig.VersionedPlugins.
func ClientSets() map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: {PluginName: &grpcPlugin{}}}
}

// ServerSets returns the plugin sets by protocol version for a plugin's
// go-plugin ServeConfig.VersionedPlugins, serving what register registers.
func ServerSets(register Register) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{ProtocolVersion: {PluginName: &grpcPlugin{register: register}}}
}

// PointsToProto converts points (one per row) to protocol messages.
func PointsToProto(pts [][]float64) []*pb.Point {
	out := make([]*pb.Point, len(pts))
	for i, x := range pts {
		out[i] = &pb.Point{X: x}
	}
	return out
}

// PointsFromProto converts protocol points to rows.
func PointsFromProto(pts []*pb.Point) [][]float64 {
	out := make([][]float64, len(pts))
	for i, p := range pts {
		out[i] = p.GetX()
	}
	return out
}
