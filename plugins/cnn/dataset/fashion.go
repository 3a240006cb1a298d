package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FashionMNISTDir is where Debian's dataset-fashion-mnist package installs
// the four IDX files.
const FashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// FashionMNISTHint says how to get Fashion-MNIST.
const FashionMNISTHint = "install it with `apt-get install dataset-fashion-mnist` (Debian/Ubuntu, into " +
	FashionMNISTDir + "), or put the four Fashion-MNIST files " +
	"train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, t10k-images-idx3-ubyte.gz and " +
	"t10k-labels-idx1-ubyte.gz (from the Fashion-MNIST repository) in a directory and pass it as data_dir"

// FashionMNIST reads the training (60,000) and test (10,000) sets of
// Fashion-MNIST from dir: 28×28×1 images, 10 classes. Each file may be
// gzip-compressed (name.gz, tried first) or not.
func FashionMNIST(dir string) (train, test *Set, err error) {
	if train, err = readMNISTPair(dir, "train"); err != nil {
		return nil, nil, err
	}
	if test, err = readMNISTPair(dir, "t10k"); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// readMNISTPair reads prefix-images-idx3-ubyte and prefix-labels-idx1-ubyte.
func readMNISTPair(dir, prefix string) (*Set, error) {
	images, err := readIDXIn(dir, prefix+"-images-idx3-ubyte")
	if err != nil {
		return nil, err
	}
	labels, err := readIDXIn(dir, prefix+"-labels-idx1-ubyte")
	if err != nil {
		return nil, err
	}
	name := filepath.Join(dir, prefix+"-images-idx3-ubyte")
	if len(images.Dims) != 3 {
		return nil, fmt.Errorf("dataset: %s: dimensions %v, want [N H W]", name, images.Dims)
	}
	if len(labels.Dims) != 1 || labels.Dims[0] != images.Dims[0] {
		return nil, fmt.Errorf("dataset: %s: label dimensions %v do not match %d images", name, labels.Dims, images.Dims[0])
	}
	for i, l := range labels.Data {
		if l >= 10 {
			return nil, fmt.Errorf("dataset: %s labels: label %d of example %d outside [0, 10)", name, l, i)
		}
	}
	return &Set{
		Name: "fashion-mnist/" + prefix, H: images.Dims[1], W: images.Dims[2], C: 1, Classes: 10,
		Pixels: images.Data, Labels: labels.Data,
	}, nil
}

// readIDXIn reads base.gz or base from dir.
func readIDXIn(dir, base string) (*IDX, error) {
	gz := filepath.Join(dir, base+".gz")
	idx, err := ReadIDXFile(gz)
	if errors.Is(err, fs.ErrNotExist) {
		plain := filepath.Join(dir, base)
		if _, statErr := os.Stat(plain); statErr == nil {
			idx, err = ReadIDXFile(plain)
		}
	}
	if err != nil {
		return nil, missing(gz, FashionMNISTHint, err)
	}
	return idx, nil
}
