package nn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tesbo/tesbo/plugins/cnn/dataset"
	"github.com/tesbo/tesbo/plugins/cnn/nn"

	"github.com/tesbo/tesbo/internal/testenv"
)

// fashion loads the first nTrain/nTest examples of the real Fashion-MNIST,
// standardized with the training subset's pixel mean and deviation. It fails
// with the install command when CI is set and skips otherwise.
func fashion(t testing.TB, nTrain, nTest int) (xtr []float32, ytr []int, xte []float32, yte []int) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dataset.FashionMNISTDir, "train-images-idx3-ubyte.gz")); err != nil {
		testenv.Need(t, "real Fashion-MNIST not found: "+dataset.FashionMNISTHint)
	}
	train, test, err := dataset.FashionMNIST(dataset.FashionMNISTDir)
	if err != nil {
		t.Fatal(err)
	}
	train, test = train.Head(nTrain), test.Head(nTest)
	mean, std := train.ChannelStats()
	return train.Standardized(mean, std), train.IntLabels(), test.Standardized(mean, std), test.IntLabels()
}

// shortRun is the configuration of the short training test: 5,000 images,
// one epoch (157 updates), small enough to finish in seconds on two cores.
//
// The issue suggests 3,000 images; the test uses 5,000 because 3,000 leaves
// the result too close to the 75% bar. Test accuracy on the first 2,000
// test images, measured with these settings (NewCNN seed, Train seed):
//
//	seeds     3,000 images (94 updates)   5,000 images (157 updates)
//	42, 7     76.50%                      81.00%   (the test's seeds)
//	1, 1      76.65%                      82.15%
//	2, 2      78.10%                      77.50%
//	3, 3      78.55%                      80.00%
//	4, 4      73.95%                      80.00%
//
// With 3,000 images one seed in five fails and the test's own seed passes
// by 1.5 points; with 5,000 the worst is 2.5 points above the bar.
var shortRun = struct {
	cfg nn.Config
	set nn.TrainSettings
}{
	cfg: nn.Config{Input: nn.Shape{H: 28, W: 28, C: 1}, Classes: 10, Filters: 16, Dense: 128, Dropout: 0.25},
	set: nn.TrainSettings{BatchSize: 32, Epochs: 1, LR: 0.02, Decay: 0.01, L2: 1e-5, Momentum: 0.9, Seed: 7},
}

func trainOnce(t *testing.T, xtr []float32, ytr []int, xte []float32, yte []int) (float64, nn.TrainStats) {
	t.Helper()
	net, err := nn.NewCNN[float32](shortRun.cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
	st, err := nn.Train(context.Background(), net, xtr, ytr, shortRun.set)
	if err != nil {
		t.Fatal(err)
	}
	return net.Accuracy(xte, yte), st
}

// TestShortTrainingRun trains on 5,000 Fashion-MNIST images (not the
// issue's 3,000; see shortRun for the per-seed figures) for one epoch and
// requires > 75% accuracy on 2,000 test images, and bit-identical accuracy
// from a second run with the same seeds.
func TestShortTrainingRun(t *testing.T) {
	xtr, ytr, xte, yte := fashion(t, 5000, 2000)
	acc1, st := trainOnce(t, xtr, ytr, xte, yte)
	t.Logf("accuracy %.4f after %d steps (%.2f epochs) in %v, last loss %.3f", acc1, st.Steps, st.Epochs, st.Duration, st.Loss)
	if st.Diverged || st.Stopped || st.Steps != 157 {
		t.Fatalf("stats %+v, want 157 steps, not stopped or diverged", st)
	}
	if acc1 <= 0.75 {
		t.Fatalf("test accuracy %.4f, want > 0.75", acc1)
	}
	acc2, _ := trainOnce(t, xtr, ytr, xte, yte)
	if acc2 != acc1 {
		t.Fatalf("same seed gave accuracy %.6f then %.6f", acc1, acc2)
	}
}
