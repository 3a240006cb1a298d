package loader

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/tesbo/tesbo/sdk/proto"
)

// The floor benchmarks bound BenchmarkGoPluginEvaluate from below: the same
// Evaluate RPC over a Unix socket with nothing of go-plugin, mTLS or the
// loader around it, first to a server in this process, then to a child
// process. Only the process boundary differs between the two, so their gap
// is the cost of crossing processes (scheduler wake-ups on both sides),
// which no change in tesbo can remove.

// envFloorServe makes the test binary serve floorObjective on the Unix
// socket it names (TestMain), for BenchmarkGRPCFloorChildProcess.
const envFloorServe = "TESBO_TEST_FLOOR_SOCKET"

// floorObjective answers Evaluate with x[0] and does nothing else.
type floorObjective struct {
	pb.UnimplementedObjectiveServer
}

func (floorObjective) Evaluate(_ context.Context, r *pb.EvaluateRequest) (*pb.EvaluateResponse, error) {
	return &pb.EvaluateResponse{Value: r.X[0]}, nil
}

// serveFloor serves floorObjective on the Unix socket sock until the
// listener fails or the server stops.
func serveFloor(sock string) error {
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	pb.RegisterObjectiveServer(s, floorObjective{})
	return s.Serve(l)
}

// serveFloorMain is the child process of BenchmarkGRPCFloorChildProcess.
func serveFloorMain(sock string) int {
	if err := serveFloor(sock); err != nil {
		fmt.Fprintln(os.Stderr, "floor server:", err)
		return 2
	}
	return 0
}

// floorBench waits for the server on sock and times Evaluate calls to it
// (see timeCalls).
func floorBench(b *testing.B, sock string) {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("the floor server did not create its socket within 10s")
		}
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	c := pb.NewObjectiveClient(conn)
	ctx := context.Background()
	req := &pb.EvaluateRequest{X: []float64{0.5, 0.5}}
	timeCalls(b, func() error {
		_, err := c.Evaluate(ctx, req)
		return err
	})
}

// BenchmarkGRPCFloorInProcess: plain gRPC to a server in this process.
func BenchmarkGRPCFloorInProcess(b *testing.B) {
	sock := filepath.Join(b.TempDir(), "floor.sock")
	go serveFloor(sock) // stops with the process; the socket's dir is removed
	floorBench(b, sock)
}

// BenchmarkGRPCFloorChildProcess: plain gRPC to a child process.
func BenchmarkGRPCFloorChildProcess(b *testing.B) {
	sock := filepath.Join(b.TempDir(), "floor.sock")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envFloorServe+"="+sock)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	floorBench(b, sock)
}
