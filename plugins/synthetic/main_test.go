package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"

	"github.com/tesbo/tesbo/internal/pluginwire"
	"github.com/tesbo/tesbo/internal/pluginwire/hostside"
	"github.com/tesbo/tesbo/problems/conditional"
	"github.com/tesbo/tesbo/problems/curves"
	"github.com/tesbo/tesbo/problems/fidelity"
	"github.com/tesbo/tesbo/problems/testfunc"
	"github.com/tesbo/tesbo/problems/usersuite"
	"github.com/tesbo/tesbo/sdk"
	pb "github.com/tesbo/tesbo/sdk/proto"
)

// The test binary doubles as the plugin: started with this variable set it
// runs main, so the test exercises the real go-plugin handshake and gRPC
// transport without a separate build.
const servePluginEnv = "TESBO_SYNTHETIC_TEST_SERVE"

func TestMain(m *testing.M) {
	if os.Getenv(servePluginEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

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
	conn := raw.(*pluginwire.Conn).Conn
	ctx := context.Background()

	desc, err := pb.NewPluginClient(conn).Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(desc.Objectives) != len(testfunc.Names())+len(testfunc.MultiNames())+len(usersuite.Names())+len(curves.Names())+len(conditional.All())+len(fidelity.All()) {
		t.Errorf("plugin serves %v, want synthetic/ + %v, %v, %v and the conditional problems", desc.Objectives, testfunc.Names(), usersuite.Names(), curves.Names())
	}
	checkReportStream(t, ctx, pb.NewObjectiveClient(conn))

	obj := pb.NewObjectiveClient(conn)
	const name = "synthetic/hartmann6"
	info, err := obj.Info(ctx, &pb.InfoRequest{Objective: name})
	if err != nil {
		t.Fatal(err)
	}
	h6 := testfunc.Hartmann6()
	if len(info.Params) != 6 || info.Optimum == nil || *info.Optimum != h6.Optimum ||
		!info.Configurable || !info.NoiseFree || info.Minimize {
		t.Errorf("Info over gRPC: %v", info)
	}
	if _, err := obj.Configure(ctx, &pb.ConfigureRequest{Objective: name,
		Params: map[string]string{"noise_var": "0.01", "seed": "4"}}); err != nil {
		t.Fatal(err)
	}
	x := h6.Maximizers[0]
	y, err := obj.Evaluate(ctx, &pb.EvaluateRequest{Objective: name, X: x})
	if err != nil {
		t.Fatal(err)
	}
	if want := h6.Optimum + 0.1*testfunc.Noise(4, x); math.Abs(y.Value-want) > 1e-15 {
		t.Errorf("noisy value over gRPC %.17g, want %.17g", y.Value, want)
	}
	nf, err := obj.Evaluate(ctx, &pb.EvaluateRequest{Objective: name, X: x,
		Mode: pb.EvaluateMode_EVALUATE_MODE_NOISE_FREE})
	if err != nil || nf.Value != h6.Optimum {
		t.Errorf("noise-free value over gRPC %v, %v; want f* = %.17g", nf, err, h6.Optimum)
	}
	// Errors cross the wire as errors, not crashes.
	if _, err := obj.Evaluate(ctx, &pb.EvaluateRequest{Objective: name, X: []float64{0.5}}); err == nil {
		t.Error("wrong dimension: want an error")
	}
	if _, err := obj.Configure(ctx, &pb.ConfigureRequest{Objective: "synthetic/branin",
		Params: map[string]string{"dim": "3"}}); err == nil {
		t.Error("dim for branin: want an error")
	}
	if _, err := obj.Info(ctx, &pb.InfoRequest{Objective: "synthetic/nosuch"}); err == nil {
		t.Error("unknown objective: want an error")
	}

	// A user-suite problem: Int and LogFloat parameters, minimized, and a
	// failing region whose error crosses the wire.
	li, err := obj.Info(ctx, &pb.InfoRequest{Objective: "user/hpo4"})
	if err != nil {
		t.Fatal(err)
	}
	got := hostside.InfoFromProto(li)
	hpo4, _ := usersuite.Lookup("hpo4")
	if !got.Minimize || got.Optimum == nil || *got.Optimum != hpo4.Opt || len(got.Params) != 4 ||
		got.Params[0].Kind != sdk.LogFloat || got.Params[1].Kind != sdk.Int {
		t.Errorf("user/hpo4 info over gRPC: %+v", got)
	}
	if _, err := obj.Evaluate(ctx, &pb.EvaluateRequest{Objective: "user/fail2", X: []float64{0.5, 0.5}}); err == nil ||
		!strings.Contains(err.Error(), "evaluation failed in this region") {
		t.Errorf("user/fail2 in its failing region: %v, want the region's error", err)
	}
}

// checkReportStream runs curve/saturate2 on the ReportEvaluate stream and
// stops it after its second epoch: the result is the second report.
func checkReportStream(t *testing.T, ctx context.Context, obj pb.ObjectiveClient) {
	t.Helper()
	info, err := obj.Info(ctx, &pb.InfoRequest{Objective: "curve/saturate2"})
	if err != nil || !info.Reports || info.MaxStep != curves.Steps {
		t.Fatalf("curve/saturate2 info: %v (reports %v, max step %d)", err, info.GetReports(), info.GetMaxStep())
	}
	stream, err := obj.ReportEvaluate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pb.ReportToPlugin{Evaluate: &pb.EvaluateRequest{Objective: "curve/saturate2", X: []float64{0.5, 0.5}}}); err != nil {
		t.Fatal(err)
	}
	var last float64
	for step := int64(1); ; step++ {
		m, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r := m.GetResult(); r != nil {
			if step != 3 || r.Value != last {
				t.Fatalf("result %v after %d reports, want the second report's %v", r.Value, step-1, last)
			}
			return
		}
		if iv := m.GetIntermediate(); iv == nil || iv.Step != step {
			t.Fatalf("message %d: %v", step, m)
		}
		last = m.GetIntermediate().Value
		if err := stream.Send(&pb.ReportToPlugin{Prune: step == 2}); err != nil {
			t.Fatal(err)
		}
	}
}
