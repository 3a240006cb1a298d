// Command cnn is tesbo's CNN hyper-parameter tuning objective, the paper's
// first real-world workload (§5.3): it trains a two-layer convolutional
// network (package nn) on an image data set (package dataset) and returns
// the test accuracy (or a validation accuracy, val_size below), to be
// maximized over seven hyper-parameters:
//
//	batch_size     Int       [16, 512]
//	filters        Int       [6, 256]      filters of both 3×3 convolutions
//	dense_units    Int       [128, 2048]
//	dropout        Float     [0, 0.75]
//	l2             LogFloat  [1e-7, 1e-3]  penalty (λ/2)·‖W‖² on the weights
//	learning_rate  LogFloat  [1e-7, 1e-1]
//	lr_decay       LogFloat  [1e-7, 1e-3]  η_t = learning_rate/(1 + lr_decay·t)
//
// Info.Optimum is 1.0 (a perfect classifier), so the host's immediate regret
// is 1 − accuracy of the recommended configuration.
//
// The plugin serves a second objective, cnn/mixed, over the same seven
// parameters and two categorical ones (MixedSpace):
//
//	optimizer      Categorical  sgd, momentum (the paper's), adam
//	activation     Categorical  relu (the paper's), tanh
//
// and a third, cnn/cond (ConditionalSpace), with each optimizer's own decay
// rate as a conditional parameter:
//
//	momentum       Float  [0.5, 0.99]  only when optimizer = momentum
//	adam_beta1     Float  [0.5, 0.99]  only when optimizer = adam
//
// Run parameters (--param key=value):
//
//	dataset     fashion-mnist (default) or cifar10
//	data_dir    directory of the data files (default for fashion-mnist:
//	            /usr/share/datasets/fashion-mnist, from Debian's
//	            dataset-fashion-mnist; required for cifar10: the unpacked
//	            cifar-10-batches-bin directory)
//	train_size  training images used, the first N of the training set
//	            (default 10000, or all when the set has fewer; a larger
//	            value given is refused)
//	test_size   test images scored, the first N of the test set (default
//	            2000, or all when fewer; a larger value given is refused)
//	val_size    when positive, the N training images after the first
//	            train_size are a validation set: the value is the accuracy
//	            on them, and the test accuracy is metadata (test_accuracy),
//	            so a study never selects on the images it is judged on
//	            (default 0: the value is the test accuracy, as in the paper)
//	epochs      passes over the training images (default 1; fractions allowed)
//	budget      wall-clock limit on the training of one evaluation, e.g. 40s
//	            or 2m (default 40s); the network trained so far is scored.
//	            It bounds training only: scoring the test_size test images
//	            comes on top, up to about 14 ms per image for the largest
//	            network (≈ 28 s at the default 2000; 68 s in all, the worst
//	            measured). A host --eval-timeout must allow for both.
//	concurrent  evaluations trained at the same time in this process
//	            (default 1: each uses every core)
//	seed        seeds weights, shuffles and dropout (the host sends the study seed)
//
// The host discovers this directory under ./plugins and builds it on first
// use; started by hand it only prints go-plugin's handshake error.
package main

import "github.com/tesbo/tesbo/sdk"

func main() {
	sdk.ServeObjectives(map[string]sdk.Objective{
		"": NewObjective(), MixedName: NewMixedObjective(), ConditionalName: NewConditionalObjective(),
	})
}
