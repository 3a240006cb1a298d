package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tesbo/tesbo/plugins/cnn/dataset"
	"github.com/tesbo/tesbo/plugins/cnn/nn"
	"github.com/tesbo/tesbo/sdk"
)

// writeIDX writes a gzip-compressed unsigned-byte IDX file.
func writeIDX(t testing.TB, path string, dims []int, data []byte) {
	t.Helper()
	var raw bytes.Buffer
	raw.Write([]byte{0, 0, 8, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&raw, binary.BigEndian, uint32(d))
	}
	raw.Write(data)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw.Bytes())
	zw.Close()
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// fakeFashion writes an easy Fashion-MNIST-format data set to a temporary
// directory: 28×28 images whose class k is a bright 7×7 square at one of ten
// positions, on uniform noise. A working network learns it in one epoch.
func fakeFashion(t testing.TB, nTrain, nTest int) string {
	t.Helper()
	return fakeFashionRelabelled(t, nTrain, nTest, nTrain)
}

// fakeFashionRelabelled is fakeFashion with the training images from index
// from on labelled one class off (class k's square labelled k + 1 mod 10),
// so that a network trained on the first ones scores about 0 on them.
func fakeFashionRelabelled(t testing.TB, nTrain, nTest, from int) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, part := range []struct {
		prefix string
		n      int
	}{{"train", nTrain}, {"t10k", nTest}} {
		pix, lab := make([]byte, part.n*784), make([]byte, part.n)
		for i := range part.n {
			k := rng.IntN(10)
			lab[i] = byte(k)
			if part.prefix == "train" && i >= from {
				lab[i] = byte((k + 1) % 10)
			}
			img := pix[i*784 : (i+1)*784]
			for p := range img {
				img[p] = byte(rng.IntN(100))
			}
			y0, x0 := 3+(k/5)*14, 1+(k%5)*5
			for y := y0; y < y0+7; y++ {
				for x := x0; x < x0+5; x++ {
					img[y*28+x] = 255
				}
			}
		}
		writeIDX(t, filepath.Join(dir, part.prefix+"-images-idx3-ubyte.gz"), []int{part.n, 28, 28}, pix)
		writeIDX(t, filepath.Join(dir, part.prefix+"-labels-idx1-ubyte.gz"), []int{part.n}, lab)
	}
	return dir
}

// small is a cheap point of the space: batch 32, 8 filters, 128 units.
var small = []float64{32, 8, 128, 0.1, 1e-5, 0.05, 1e-4}

func TestInfoIsThePapersSpace(t *testing.T) {
	info, err := NewObjective().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := info.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []sdk.Param{
		{Name: "batch_size", Kind: sdk.Int, Low: 16, High: 512},
		{Name: "filters", Kind: sdk.Int, Low: 6, High: 256},
		{Name: "dense_units", Kind: sdk.Int, Low: 128, High: 2048},
		{Name: "dropout", Kind: sdk.Float, Low: 0, High: 0.75},
		{Name: "l2", Kind: sdk.LogFloat, Low: 1e-7, High: 1e-3},
		{Name: "learning_rate", Kind: sdk.LogFloat, Low: 1e-7, High: 1e-1},
		{Name: "lr_decay", Kind: sdk.LogFloat, Low: 1e-7, High: 1e-3},
	}
	if len(info.Params) != len(want) {
		t.Fatalf("%d params, want %d", len(info.Params), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(info.Params[i], want[i]) {
			t.Errorf("param %d = %+v, want %+v", i, info.Params[i], want[i])
		}
	}
	if info.Name != "cnn" || info.Minimize || info.Optimum == nil || *info.Optimum != 1 {
		t.Errorf("Info name %q minimize %v optimum %v; want cnn, false, 1", info.Name, info.Minimize, info.Optimum)
	}
}

func TestParseSettings(t *testing.T) {
	s, err := parseSettings(map[string]string{"noise_var": "0.01", "seed": "9", "budget": "2m",
		"train_size": "500", "test_size": "100", "epochs": "2.5", "concurrent": "2", "dataset": "Fashion"})
	if err != nil {
		t.Fatal(err)
	}
	want := Settings{Dataset: DatasetFashion, DataDir: dataset.FashionMNISTDir, TrainSize: 500, TestSize: 100,
		Epochs: 2.5, Budget: 2 * time.Minute, Concurrent: 2, Seed: 9, trainGiven: true, testGiven: true}
	if s != want {
		t.Fatalf("settings %+v, want %+v", s, want)
	}
	if s, _ := parseSettings(map[string]string{"budget": "12.5"}); s.Budget != 12500*time.Millisecond {
		t.Errorf("budget=12.5 gave %v, want 12.5s", s.Budget)
	}
	for params, wantErr := range map[[2]string]string{
		{"dataset", "mnist"}:     "unknown data set",
		{"train_size", "0"}:      "not positive",
		{"epochs", "-1"}:         "not in (0, 1000]",
		{"budget", "soon"}:       "not a duration",
		{"budget", "-5s"}:        "not positive",
		{"seed", "x"}:            "invalid syntax",
		{"learning_rate", "0.1"}: "unknown parameter",
		{"dataset", "cifar10"}:   "needs --param data_dir",
	} {
		_, err := parseSettings(map[string]string{params[0]: params[1]})
		if err == nil || !strings.Contains(err.Error(), wantErr) || !strings.Contains(err.Error(), params[0]) && params[1] != "cifar10" {
			t.Errorf("%s=%s: error %v, want one containing %q", params[0], params[1], err, wantErr)
		}
	}
}

func TestDecode(t *testing.T) {
	h, err := decode(Space, []float64{16.4, 255.6, 2048, 0.75, 1e-7, 0.1, 1e-3})
	if err != nil {
		t.Fatal(err)
	}
	if h.BatchSize != 16 || h.Filters != 256 || h.Dense != 2048 || h.Dropout != 0.75 || h.LR != 0.1 ||
		h.Optimizer != nn.SGDOptimizer || h.Momentum != Momentum || h.Activation != nn.ReLUActivation {
		t.Errorf("decoded %+v", h)
	}
	for _, x := range [][]float64{
		{32, 8, 128},                              // too short
		{32, 8, 128, 0.1, 1e-5, 0.05, 1e-4, 1},    // too long
		{15, 8, 128, 0.1, 1e-5, 0.05, 1e-4},       // batch below 16
		{32, 8, 128, 0.8, 1e-5, 0.05, 1e-4},       // dropout above 0.75
		{32, 8, 128, 0.1, 1e-5, math.NaN(), 1e-4}, // NaN
	} {
		if _, err := decode(Space, x); err == nil {
			t.Errorf("decode(%v): want an error", x)
		}
	}
}

// The mixed space is the paper's seven parameters then the optimizer and
// the activation; each choice decodes to its training setting, and bad
// choices are refused.
func TestMixedSpace(t *testing.T) {
	info, err := NewMixedObjective().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := info.Validate(); err != nil {
		t.Fatal(err)
	}
	if info.Name != MixedName || len(info.Params) != 9 || !reflect.DeepEqual(info.Params[:7], Space) {
		t.Fatalf("Info %+v", info)
	}
	if c := info.Params[7].Choices; info.Params[7].Kind != sdk.Categorical || !reflect.DeepEqual(c, []string{"sgd", "momentum", "adam"}) {
		t.Errorf("optimizer %+v", info.Params[7])
	}
	if c := info.Params[8].Choices; info.Params[8].Kind != sdk.Categorical || !reflect.DeepEqual(c, []string{"relu", "tanh"}) {
		t.Errorf("activation %+v", info.Params[8])
	}
	for _, tc := range []struct {
		opt, act float64
		want     Hyper
	}{
		{0, 0, Hyper{Optimizer: nn.SGDOptimizer, Momentum: -1, Activation: nn.ReLUActivation}},
		{1, 1, Hyper{Optimizer: nn.SGDOptimizer, Momentum: Momentum, Activation: nn.TanhActivation}},
		{2, 0, Hyper{Optimizer: nn.AdamOptimizer, Momentum: Momentum, Activation: nn.ReLUActivation}},
	} {
		h, err := decode(MixedSpace, append(append([]float64(nil), small...), tc.opt, tc.act))
		if err != nil {
			t.Fatal(err)
		}
		if h.Optimizer != tc.want.Optimizer || h.Momentum != tc.want.Momentum || h.Activation != tc.want.Activation {
			t.Errorf("choices (%v, %v) decoded to %+v, want %+v", tc.opt, tc.act, h, tc.want)
		}
	}
	for _, bad := range [][]float64{{3, 0}, {0, 2}, {-1, 0}, {0.5, math.NaN()}} {
		if _, err := decode(MixedSpace, append(append([]float64(nil), small...), bad...)); err == nil {
			t.Errorf("choices %v: want an error", bad)
		}
	}
	if _, err := decode(MixedSpace, small); err == nil {
		t.Error("seven values for the mixed space: want an error")
	}
}

// Every optimizer and activation of the mixed space trains the network on
// the generated data set, and the choices change the training (its final
// loss: the accuracy on this easy set is often 1 for several).
func TestMixedEvaluate(t *testing.T) {
	dir := fakeFashion(t, 600, 200)
	ctx := context.Background()
	o := NewMixedObjective()
	if err := o.Configure(ctx, map[string]string{"data_dir": dir, "seed": "3", "noise_var": "0"}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, c := range []struct {
		opt, act, lr float64
		name         string
	}{{0, 0, 0.1, "sgd/relu"}, {1, 1, 0.05, "momentum/tanh"}, {2, 0, 1e-3, "adam/relu"}, {2, 1, 1e-3, "adam/tanh"}} {
		x := append(append([]float64(nil), small...), c.opt, c.act)
		x[5] = c.lr
		r, err := o.EvaluateDetail(ctx, x)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		loss := r.Meta["train_loss"]
		t.Logf("%s: accuracy %.3f, training loss %s", c.name, r.Value, loss)
		if r.Value < 0.5 {
			t.Errorf("%s: accuracy %.3f on the generated set, want ≥ 0.5", c.name, r.Value)
		}
		if prev, ok := seen[loss]; ok {
			t.Errorf("%s and %s end with the same training loss %s: a choice is ignored", prev, c.name, loss)
		}
		seen[loss] = c.name
	}
}

// The conditional space is the mixed space then the two decay rates, each
// active on its own optimizer only; an inactive rate is ignored whatever
// the caller sends, an active one is checked and reaches the training.
func TestConditionalSpace(t *testing.T) {
	info, err := NewConditionalObjective().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := info.Validate(); err != nil {
		t.Fatal(err)
	}
	if info.Name != ConditionalName || len(info.Params) != 11 || !reflect.DeepEqual(info.Params[:9], MixedSpace) {
		t.Fatalf("Info %+v", info)
	}
	for i, on := range map[int]string{9: "momentum", 10: "adam"} {
		c := info.Params[i].ActiveIf
		if c == nil || c.Parent != "optimizer" || !reflect.DeepEqual(c.Values, []string{on}) {
			t.Errorf("%s: condition %+v, want optimizer = %s", info.Params[i].Name, c, on)
		}
	}
	point := func(opt, mom, beta float64) []float64 {
		return append(append([]float64(nil), small...), opt, 0, mom, beta)
	}
	nan := math.NaN()
	for _, tc := range []struct {
		x    []float64
		want Hyper
	}{
		{point(0, nan, nan), Hyper{Optimizer: nn.SGDOptimizer, Momentum: -1}},
		{point(1, 0.6, nan), Hyper{Optimizer: nn.SGDOptimizer, Momentum: 0.6}},
		{point(2, nan, 0.7), Hyper{Optimizer: nn.AdamOptimizer, Momentum: Momentum, Beta1: 0.7}},
		{point(0, 0.6, 0.7), Hyper{Optimizer: nn.SGDOptimizer, Momentum: -1}},                    // inactive values ignored
		{point(2, 5, 0.99), Hyper{Optimizer: nn.AdamOptimizer, Momentum: Momentum, Beta1: 0.99}}, // even out of range
	} {
		h, err := decode(ConditionalSpace, tc.x)
		if err != nil {
			t.Fatalf("decode(%v): %v", tc.x, err)
		}
		if h.Optimizer != tc.want.Optimizer || h.Momentum != tc.want.Momentum || h.Beta1 != tc.want.Beta1 {
			t.Errorf("decode(%v) = %+v, want %+v", tc.x, h, tc.want)
		}
	}
	for _, bad := range [][]float64{point(1, nan, nan), point(1, 0.995, nan), point(2, nan, 0.4), point(2, 0.9, nan)} {
		if _, err := decode(ConditionalSpace, bad); err == nil {
			t.Errorf("decode(%v): want an error (an active rate missing or out of range)", bad)
		}
	}
	// decode reads parameters by name: the same space and point in another
	// order (parents still before their conditional parameters) decode
	// alike.
	perm := []int{7, 8, 9, 10, 6, 5, 4, 3, 2, 1, 0}
	moved := make([]sdk.Param, len(perm))
	for i, j := range perm {
		moved[i] = ConditionalSpace[j]
	}
	for _, x := range [][]float64{point(0, nan, nan), point(1, 0.6, nan), point(2, nan, 0.7)} {
		want, err := decode(ConditionalSpace, x)
		if err != nil {
			t.Fatal(err)
		}
		xm := make([]float64, len(perm))
		for i, j := range perm {
			xm[i] = x[j]
		}
		got, err := decode(moved, xm)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("decode of %v in another order = %+v, %v; want %+v", x, got, err, want)
		}
	}
}

// On the generated data set each branch of the conditional space trains,
// its decay rate changes the training, and the momentum branch at 0.9 is
// the mixed space's momentum choice bit for bit (the same network).
func TestConditionalEvaluate(t *testing.T) {
	dir := fakeFashion(t, 600, 200)
	ctx := context.Background()
	cfg := map[string]string{"data_dir": dir, "seed": "3", "noise_var": "0"}
	cond, mixed := NewConditionalObjective(), NewMixedObjective()
	for _, o := range []*Objective{cond, mixed} {
		if err := o.Configure(ctx, cfg); err != nil {
			t.Fatal(err)
		}
	}
	loss := func(o *Objective, x []float64) string {
		t.Helper()
		r, err := o.EvaluateDetail(ctx, x)
		if err != nil {
			t.Fatalf("%v: %v", x, err)
		}
		return r.Meta["train_loss"]
	}
	nan := math.NaN()
	at := func(opt, mom, beta, lr float64) []float64 {
		x := append(append([]float64(nil), small...), opt, 0, mom, beta)
		x[5] = lr
		return x
	}
	if a, b := loss(cond, at(1, 0.9, nan, 0.05)), loss(mixed, at(1, 0, 0, 0.05)[:9]); a != b {
		t.Errorf("momentum 0.9: training loss %s, mixed space's momentum %s", a, b)
	}
	if a, b := loss(cond, at(1, 0.5, nan, 0.05)), loss(cond, at(1, 0.9, nan, 0.05)); a == b {
		t.Errorf("momentum 0.5 and 0.9 end with the same training loss %s", a)
	}
	if a, b := loss(cond, at(2, nan, 0.5, 1e-3)), loss(cond, at(2, nan, 0.9, 1e-3)); a == b {
		t.Errorf("Adam's β₁ 0.5 and 0.9 end with the same training loss %s", a)
	}
	if a, b := loss(cond, at(2, nan, 0.9, 1e-3)), loss(mixed, at(2, 0, 0, 1e-3)[:9]); a != b {
		t.Errorf("β₁ 0.9: training loss %s, mixed space's adam %s", a, b)
	}
	loss(cond, at(0, nan, nan, 0.1))
}

func TestMissingDataIsAClearError(t *testing.T) {
	o := NewObjective()
	dir := filepath.Join(t.TempDir(), "none")
	err := o.Configure(context.Background(), map[string]string{"data_dir": dir})
	if err == nil || !strings.Contains(err.Error(), "apt-get install dataset-fashion-mnist") ||
		!strings.Contains(err.Error(), filepath.Join(dir, "train-images-idx3-ubyte.gz")) {
		t.Fatalf("error %v, want the missing file and the install command", err)
	}
	if _, err := o.Evaluate(context.Background(), small); err == nil {
		t.Fatal("Evaluate with missing data: want an error")
	}
	err = o.Configure(context.Background(), map[string]string{"dataset": "cifar10", "data_dir": dir})
	if err == nil || !strings.Contains(err.Error(), "data_batch_1.bin") || !strings.Contains(err.Error(), "cifar-10-binary.tar.gz") {
		t.Fatalf("error %v, want the missing CIFAR file and the download page", err)
	}
}

// TestMismatchedDataIsAClearError gives the objective test images of
// another size than the training images (20×20 against 28×28): Configure
// and Evaluate must return an error naming the test file, not panic when
// scoring reads the test pixels with the training images' shape.
func TestMismatchedDataIsAClearError(t *testing.T) {
	dir := fakeFashion(t, 50, 20)
	testImages := filepath.Join(dir, "t10k-images-idx3-ubyte.gz")
	writeIDX(t, testImages, []int{20, 20, 20}, make([]byte, 20*400))
	o := NewObjective()
	ctx := context.Background()
	err := o.Configure(ctx, map[string]string{"data_dir": dir, "train_size": "50"})
	var me *dataset.MalformedError
	if !errors.As(err, &me) || me.Path != testImages || !strings.Contains(err.Error(), "are 20×20×1 but training images") {
		t.Fatalf("Configure error %v, want a *dataset.MalformedError for %s about the image size", err, testImages)
	}
	if _, err := o.Evaluate(ctx, small); err == nil || !strings.Contains(err.Error(), testImages) {
		t.Fatalf("Evaluate error %v, want the same error", err)
	}
}

// TestEvaluateOnGeneratedData trains on an easy generated data set: the
// accuracy must be far above chance, identical for the same seed, and the
// metadata complete.
func TestEvaluateOnGeneratedData(t *testing.T) {
	dir := fakeFashion(t, 600, 200)
	ctx := context.Background()
	o := NewObjective()
	if err := o.Configure(ctx, map[string]string{"data_dir": dir, "seed": "3", "noise_var": "0"}); err != nil {
		t.Fatal(err)
	}
	r1, err := o.EvaluateDetail(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("accuracy %.3f, meta %v", r1.Value, r1.Meta)
	if r1.Value < 0.8 {
		t.Errorf("accuracy %.3f on the generated set, want ≥ 0.8", r1.Value)
	}
	for _, k := range []string{"train_s", "eval_s", "steps", "epochs_done", "budget_hit", "diverged", "train_loss", "train_images", "test_images", "dataset"} {
		if _, ok := r1.Meta[k]; !ok {
			t.Errorf("meta lacks %q", k)
		}
	}
	if r1.Meta["steps"] != "19" || r1.Meta["budget_hit"] != "false" || r1.Meta["train_images"] != "600" || r1.Meta["test_images"] != "200" {
		t.Errorf("meta %v: want 19 steps (600/32), no budget hit, 600/200 images", r1.Meta)
	}
	v2, err := o.Evaluate(ctx, small)
	if err != nil || v2 != r1.Value {
		t.Errorf("second evaluation %v (%v), want the same accuracy %v", v2, err, r1.Value)
	}

	// A budget too short for one update scores the untrained network and
	// says so.
	if err := o.Configure(ctx, map[string]string{"data_dir": dir, "budget": "1ns"}); err != nil {
		t.Fatal(err)
	}
	r3, err := o.EvaluateDetail(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	if r3.Meta["budget_hit"] != "true" || r3.Meta["steps"] != "0" {
		t.Errorf("1ns budget: meta %v, want budget_hit and 0 steps", r3.Meta)
	}

	// A cancelled context is an error, not a score.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := o.Evaluate(cctx, small); err == nil {
		t.Error("cancelled context: want an error")
	}
}

// TestEvaluateDivergesGracefully: a huge learning rate with no decay may
// blow up; the objective must still return an accuracy in [0, 1].
func TestEvaluateDivergesGracefully(t *testing.T) {
	dir := fakeFashion(t, 300, 100)
	o := NewObjective()
	if err := o.Configure(context.Background(), map[string]string{"data_dir": dir}); err != nil {
		t.Fatal(err)
	}
	r, err := o.EvaluateDetail(context.Background(), []float64{16, 6, 128, 0, 1e-7, 0.1, 1e-7})
	if err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(r.Value) || r.Value < 0 || r.Value > 1 {
		t.Fatalf("accuracy %v outside [0, 1] (meta %v)", r.Value, r.Meta)
	}
}

// TestScoreAfterDivergence: a network with NaN weights scores 0 through the
// probe; one that still gives finite outputs is scored in full.
func TestScoreAfterDivergence(t *testing.T) {
	dir := fakeFashion(t, 100, 150)
	o := NewObjective()
	d, err := o.load(Settings{Dataset: DatasetFashion, DataDir: dir, TrainSize: 100, TestSize: 150})
	if err != nil {
		t.Fatal(err)
	}
	net, err := nn.NewCNN[float32](nn.Config{Input: d.shape, Classes: 10, Filters: 6, Dense: 128}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := net.Accuracy(d.test.x, d.test.y)
	if got := score(net, nn.TrainStats{Diverged: true}, d.test); got != want {
		t.Errorf("finite network after divergence scored %v, want its accuracy %v", got, want)
	}
	net.Params()[0].W[0] = float32(math.NaN())
	if got := score(net, nn.TrainStats{Diverged: true}, d.test); got != 0 {
		t.Errorf("NaN network scored %v, want 0", got)
	}
}

// stopAfter is an sdk.Reporter that records the reports and says stop at
// epoch stop.
type stopAfter struct {
	stop   int
	epochs []int
	values []float64
}

func (s *stopAfter) Report(epoch int, v float64) (bool, error) {
	s.epochs, s.values = append(s.epochs, epoch), append(s.values, v)
	return epoch >= s.stop, nil
}

// TestEvaluateReportsEpochs: with a reporter in the context (a study with
// a pruner) the objective reports the test accuracy after each epoch and,
// told to stop, returns that accuracy after that epoch's updates; run to
// its end it returns what it returns without reporting. Info's MaxStep is
// the configured epochs.
func TestEvaluateReportsEpochs(t *testing.T) {
	dir := fakeFashion(t, 300, 100)
	ctx := context.Background()
	o := NewObjective()
	if err := o.Configure(ctx, map[string]string{"data_dir": dir, "seed": "3", "noise_var": "0", "epochs": "3"}); err != nil {
		t.Fatal(err)
	}
	if info, _ := o.Info(ctx); info.MaxStep != 3 {
		t.Fatalf("MaxStep %d, want the 3 epochs", info.MaxStep)
	}
	plain, err := o.Evaluate(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	full := &stopAfter{stop: 99}
	v, err := o.Evaluate(sdk.WithReporter(ctx, full), small)
	if err != nil || v != plain || len(full.epochs) != 3 || full.values[2] != plain {
		t.Fatalf("reporting run: %v (%v), reports %v %v; want %v after 3 epochs", v, err, full.epochs, full.values, plain)
	}
	early := &stopAfter{stop: 1}
	r, err := o.EvaluateDetail(sdk.WithReporter(ctx, early), small)
	if err != nil || len(early.epochs) != 1 || r.Value != early.values[0] || r.Value != full.values[0] || r.Meta["epochs_done"] != "1.000" {
		t.Fatalf("stopped after epoch 1: %v (%v), reports %v, meta %v; want %v", r.Value, err, early.values, r.Meta, full.values[0])
	}
}

// With val_size the value is the accuracy on the held-out training images
// after the first train_size (labelled one class off here, so a network
// that learnt the first ones scores near 0 on them), and the test images
// are scored for the metadata only: the same training (same seed, same
// training images) as without a validation set gives, as test_accuracy,
// exactly the value that run returns. The validation set must fit in the
// training set.
func TestEvaluateValidationSplit(t *testing.T) {
	dir := fakeFashionRelabelled(t, 800, 200, 600)
	ctx := context.Background()
	run := func(params map[string]string) sdk.Result {
		t.Helper()
		o := NewObjective()
		p := map[string]string{"data_dir": dir, "seed": "3", "train_size": "600", "epochs": "2"}
		maps.Copy(p, params)
		if err := o.Configure(ctx, p); err != nil {
			t.Fatal(err)
		}
		rep := &stopAfter{stop: 99}
		r, err := o.EvaluateDetail(sdk.WithReporter(ctx, rep), small)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.values) != 2 || rep.values[1] != r.Value {
			t.Fatalf("%v: reports %v, value %v: want two epochs, the last one the value", params, rep.values, r.Value)
		}
		return r
	}
	plain := run(nil)
	val := run(map[string]string{"val_size": "150"})
	if val.Meta["val_images"] != "150" || val.Meta["train_images"] != "600" || val.Meta["test_images"] != "200" {
		t.Fatalf("meta %v: want 600 training, 150 validation and 200 test images", val.Meta)
	}
	if _, ok := plain.Meta["test_accuracy"]; ok {
		t.Fatalf("meta %v: test_accuracy without a validation set", plain.Meta)
	}
	if got, want := val.Meta["test_accuracy"], strconv.FormatFloat(plain.Value, 'g', -1, 64); got != want {
		t.Fatalf("test_accuracy %s, want %s: the test accuracy of the same training", got, want)
	}
	if plain.Value < 0.8 || val.Value > 0.2 {
		t.Errorf("test accuracy %v, validation accuracy %v: want ≥ 0.8 and, on the relabelled images, ≤ 0.2", plain.Value, val.Value)
	}
	o := NewObjective()
	err := o.Configure(ctx, map[string]string{"data_dir": dir, "train_size": "700", "val_size": "101"})
	if err == nil || !strings.Contains(err.Error(), "exceed the 800 training images") {
		t.Errorf("a validation set past the training images: %v", err)
	}
	err = o.Configure(ctx, map[string]string{"data_dir": dir, "train_size": "9223372036854775807", "val_size": "1"})
	if err == nil || !strings.Contains(err.Error(), "exceed the 800 training images") {
		t.Errorf("train_size + val_size past the largest int: %v", err)
	}
	if err := o.Configure(ctx, map[string]string{"val_size": "-1"}); err == nil || !strings.Contains(err.Error(), "val_size") {
		t.Errorf("a negative val_size: %v", err)
	}
}
