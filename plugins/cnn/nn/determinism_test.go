package nn

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestTrainingIndependentOfCores trains a small network on random data with
// 1 and with 3 goroutines (GOMAXPROCS) and requires bit-identical weights:
// no parallel region's result depends on how the work was split.
func TestTrainingIndependentOfCores(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const m = 150
	in := Shape{10, 10, 2}
	x := make([]float32, m*in.Size())
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y := make([]int, m)
	for i := range y {
		y[i] = rng.IntN(4)
	}
	run := func(procs int) []*Param[float32] {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		net, err := NewCNN[float32](Config{Input: in, Classes: 4, Filters: 40, Dense: 70, Dropout: 0.3}, 5)
		if err != nil {
			t.Fatal(err)
		}
		net.Chunk = 40
		if _, err := Train(context.Background(), net, x, y, TrainSettings{BatchSize: 50, Epochs: 2, LR: 0.05, L2: 1e-4, Decay: 1e-3, Seed: 6}); err != nil {
			t.Fatal(err)
		}
		return net.Params()
	}
	one, three := run(1), run(3)
	for i, p := range one {
		for j, w := range p.W {
			if three[i].W[j] != w {
				t.Fatalf("%s[%d]: %v with 1 goroutine, %v with 3", p.Name, j, w, three[i].W[j])
			}
		}
	}
}

func TestTrainErrorsAndStop(t *testing.T) {
	net, err := NewCNN[float32](Config{Input: Shape{4, 4, 1}, Classes: 3, Filters: 2, Dense: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := Train(ctx, net, nil, nil, TrainSettings{}); err != errNoData {
		t.Errorf("no data: %v, want ErrNoData", err)
	}
	if _, err := Train(ctx, net, make([]float32, 15), []int{0}, TrainSettings{}); err == nil {
		t.Error("15 values for one 16-value example: want an error")
	}
	if _, err := Train(ctx, net, make([]float32, 16), []int{3}, TrainSettings{}); err == nil {
		t.Error("label 3 with 3 classes: want an error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	st, err := Train(cctx, net, make([]float32, 32), []int{0, 1}, TrainSettings{})
	if err != nil || !st.Stopped || st.Steps != 0 {
		t.Errorf("cancelled context: stats %+v, err %v; want Stopped with 0 steps", st, err)
	}
	// Fractional epochs: 10 examples, batch 4 → 3 batches per epoch; 1.5
	// epochs → ceil(4.5) = 5 updates.
	st, err = Train(ctx, net, make([]float32, 160), make([]int, 10), TrainSettings{BatchSize: 4, Epochs: 1.5})
	if err != nil || st.Steps != 5 || st.Stopped || st.Diverged {
		t.Errorf("1.5 epochs: stats %+v, err %v; want 5 steps", st, err)
	}
	for _, cfg := range []Config{
		{Input: Shape{3, 8, 1}, Classes: 3, Filters: 2, Dense: 3},
		{Input: Shape{8, 8, 1}, Classes: 1, Filters: 2, Dense: 3},
		{Input: Shape{8, 8, 1}, Classes: 3, Filters: 0, Dense: 3},
		{Input: Shape{8, 8, 1}, Classes: 3, Filters: 2, Dense: 3, Dropout: 1},
	} {
		if _, err := NewCNN[float32](cfg, 1); err == nil {
			t.Errorf("NewCNN(%+v): want an error", cfg)
		}
	}
}

// TestAfterEpoch: AfterEpoch is called after each complete epoch; scoring
// the network there leaves the weights bit for bit those of a run without
// it, and returning true halts training after that epoch.
func TestAfterEpoch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const m = 60
	in := Shape{6, 6, 1}
	x := make([]float32, m*in.Size())
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	y := make([]int, m)
	for i := range y {
		y[i] = rng.IntN(3)
	}
	train := func(after func(*Net[float32], int) bool) ([]*Param[float32], TrainStats) {
		net, err := NewCNN[float32](Config{Input: in, Classes: 3, Filters: 4, Dense: 8, Dropout: 0.3}, 2)
		if err != nil {
			t.Fatal(err)
		}
		s := TrainSettings{BatchSize: 16, Epochs: 3, LR: 0.05, Seed: 3}
		if after != nil {
			s.AfterEpoch = func(e int) bool { return after(net, e) }
		}
		st, err := Train(context.Background(), net, x, y, s)
		if err != nil {
			t.Fatal(err)
		}
		return net.Params(), st
	}
	plain, _ := train(nil)
	var epochs []int
	scored, st := train(func(n *Net[float32], e int) bool {
		epochs = append(epochs, e)
		n.Accuracy(x, y)
		return false
	})
	if len(epochs) != 3 || epochs[0] != 1 || epochs[2] != 3 || st.Halted {
		t.Fatalf("AfterEpoch calls %v, halted %v; want 1, 2, 3", epochs, st.Halted)
	}
	for i, p := range plain {
		for j, w := range p.W {
			if scored[i].W[j] != w {
				t.Fatalf("%s[%d]: %v without scoring, %v with", p.Name, j, w, scored[i].W[j])
			}
		}
	}
	_, st = train(func(_ *Net[float32], e int) bool { return e == 2 })
	if !st.Halted || st.Steps != 8 || st.Epochs != 2 {
		t.Fatalf("halted after epoch 2: %+v, want 8 steps (4 per epoch)", st)
	}
}
