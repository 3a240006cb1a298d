// Command objective is a healthy test plugin: f(x) = offset − (x0−0.3)² −
// (x1−0.7)², f* = offset, with Configure (param "offset"), EvaluateDetail (meta: pid)
// and EvaluateNoiseFree. Configure logs with sdk.Logger and, with param
// "print", writes to stdout.
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"

	"github.com/tesbo/tesbo/host/loader/testdata/plugins/objective/quadlib"
	"github.com/tesbo/tesbo/sdk"
)

type quad struct{ offset atomic.Uint64 }

// Info's f* is the configured offset: a plugin's Info may depend on its
// run parameters.
func (q *quad) Info(context.Context) (sdk.Info, error) {
	opt := q.off()
	return sdk.Info{Name: "quadratic", Params: []sdk.Param{
		{Name: "a", Kind: sdk.Float, Low: 0, High: 1},
		{Name: "b", Kind: sdk.Float, Low: 0, High: 1},
	}, Optimum: &opt}, nil
}

func (q *quad) off() float64 { return float64(int64(q.offset.Load())) }

func (q *quad) Evaluate(_ context.Context, x []float64) (float64, error) {
	return quadlib.Value(q.off(), x[0], x[1]), nil
}

func (q *quad) Configure(_ context.Context, p map[string]string) error {
	if s, ok := p["offset"]; ok {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		q.offset.Store(uint64(v))
		sdk.Logger().Info("configured", "offset", v) // hclog JSON on stderr
	}
	if _, ok := p["print"]; ok {
		fmt.Println("stray output") // after the handshake: logged by the host
	}
	return nil
}

func (q *quad) EvaluateDetail(ctx context.Context, x []float64) (sdk.Result, error) {
	v, err := q.Evaluate(ctx, x)
	return sdk.Result{Value: v, Meta: map[string]string{"pid": strconv.Itoa(os.Getpid())}}, err
}

func (q *quad) EvaluateNoiseFree(ctx context.Context, x []float64) (float64, error) {
	return q.Evaluate(ctx, x)
}

func main() { sdk.ServeObjective(&quad{}) }
