package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/tesbo/tesbo/internal/pluginwire"
	"github.com/tesbo/tesbo/internal/pluginwire/hostside"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// The test binary doubles as the plugin: started with this variable set it
// runs main, so the test goes through the real go-plugin handshake and gRPC
// transport without a separate build.
const servePluginEnv = "TESBO_CNN_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(servePluginEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// TestPluginEndToEnd starts the plugin over go-plugin, checks that Info
// carries the seven parameters, configures it on a generated data set and
// evaluates one configuration with metadata.
func TestPluginEndToEnd(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), servePluginEnv+"=1")
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  pluginwire.Handshake,
		VersionedPlugins: pluginwire.ClientSets(),
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	defer client.Kill()
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("start plugin: %v", err)
	}
	raw, err := rpc.Dispense(pluginwire.PluginName)
	if err != nil {
		t.Fatal(err)
	}
	obj := pb.NewObjectiveClient(raw.(*pluginwire.Conn).Conn)
	ctx := context.Background()

	info, err := obj.Info(ctx, &pb.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := hostside.InfoFromProto(info)
	if len(got.Params) != 7 || got.Name != "cnn" || got.Optimum == nil || *got.Optimum != 1 ||
		!info.Configurable || !info.Detailed || info.NoiseFree {
		t.Fatalf("Info over gRPC: %+v (configurable %v detailed %v)", got, info.Configurable, info.Detailed)
	}
	for i, p := range got.Params {
		if !reflect.DeepEqual(p, Space[i]) {
			t.Errorf("param %d over gRPC = %+v, want %+v", i, p, Space[i])
		}
	}

	dir := fakeFashion(t, 400, 100)
	if _, err := obj.Configure(ctx, &pb.ConfigureRequest{Params: map[string]string{
		"data_dir": dir, "seed": "1", "noise_var": "0", "budget": "30s"}}); err != nil {
		t.Fatal(err)
	}
	res, err := obj.Evaluate(ctx, &pb.EvaluateRequest{X: small, Mode: pb.EvaluateMode_EVALUATE_MODE_DETAIL})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("accuracy %.3f, meta %v", res.Value, res.Meta)
	if res.Value < 0.5 || res.Value > 1 || res.Meta["steps"] != "13" || res.Meta["test_images"] != "100" {
		t.Errorf("evaluation over gRPC: value %v meta %v; want accuracy ≥ 0.5, 13 steps, 100 test images", res.Value, res.Meta)
	}

	// cnn/cond: the conditions cross the wire, and an inactive parameter
	// arrives as NaN (the host's encoding) and is not an error.
	ci, err := obj.Info(ctx, &pb.InfoRequest{Objective: ConditionalName})
	if err != nil {
		t.Fatal(err)
	}
	if got := hostside.InfoFromProto(ci); !reflect.DeepEqual(got.Params, ConditionalSpace) {
		t.Errorf("cnn/cond's space over gRPC = %+v, want %+v", got.Params, ConditionalSpace)
	}
	if _, err := obj.Configure(ctx, &pb.ConfigureRequest{Objective: ConditionalName, Params: map[string]string{
		"data_dir": dir, "seed": "1", "noise_var": "0", "budget": "30s"}}); err != nil {
		t.Fatal(err)
	}
	x := append(append([]float64(nil), small...), 2, 0, math.NaN(), 0.8)
	x[5] = 1e-3 // Adam's learning rate
	if res, err := obj.Evaluate(ctx, &pb.EvaluateRequest{Objective: ConditionalName, X: x}); err != nil || res.Value < 0.5 {
		t.Errorf("cnn/cond with Adam over gRPC: %v, %v", res, err)
	}

	// Errors cross the wire as errors.
	if _, err := obj.Evaluate(ctx, &pb.EvaluateRequest{X: small[:3]}); err == nil {
		t.Error("wrong dimension: want an error")
	}
	if _, err := obj.Configure(ctx, &pb.ConfigureRequest{Params: map[string]string{"dataset": "imagenet"}}); err == nil {
		t.Error("unknown data set: want an error")
	}
}
