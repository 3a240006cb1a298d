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

// fashionMalformedHint is the hint of a MalformedError for a Fashion-MNIST
// file: the install hint, plus how to restore files the Debian package put
// there (a plain install does nothing when the package is already there).
const fashionMalformedHint = FashionMNISTHint +
	"; `apt-get install --reinstall dataset-fashion-mnist` restores the packaged files"

// FashionMNIST reads the training (60,000) and test (10,000) sets of
// Fashion-MNIST from dir: 28×28×1 images, 10 classes. Each file may be
// gzip-compressed (name.gz, tried first) or not. Test images of another
// size than the training images are an error (see checkPair).
func FashionMNIST(dir string) (train, test *Set, err error) {
	train, trainPath, err := readMNISTPair(dir, "train")
	if err != nil {
		return nil, nil, err
	}
	test, testPath, err := readMNISTPair(dir, "t10k")
	if err != nil {
		return nil, nil, err
	}
	if err := checkPair(train, test); err != nil {
		return nil, nil, &MalformedError{Path: testPath, Err: fmt.Errorf("does not fit %s: %w", trainPath, err), Hint: fashionMalformedHint}
	}
	return train, test, nil
}

// readMNISTPair reads prefix-images-idx3-ubyte and prefix-labels-idx1-ubyte
// and returns the set with the path of the images file it read.
func readMNISTPair(dir, prefix string) (*Set, string, error) {
	images, imagesPath, err := readIDXIn(dir, prefix+"-images-idx3-ubyte")
	if err != nil {
		return nil, "", err
	}
	labels, labelsPath, err := readIDXIn(dir, prefix+"-labels-idx1-ubyte")
	if err != nil {
		return nil, "", err
	}
	bad := func(path, format string, args ...any) error {
		return &MalformedError{Path: path, Err: fmt.Errorf(format, args...), Hint: fashionMalformedHint}
	}
	if len(images.Dims) != 3 {
		return nil, "", bad(imagesPath, "dimensions %v, want [N H W]", images.Dims)
	}
	if len(labels.Dims) != 1 || labels.Dims[0] != images.Dims[0] {
		return nil, "", bad(labelsPath, "label dimensions %v do not match the %d images of %s", labels.Dims, images.Dims[0], imagesPath)
	}
	for i, l := range labels.Data {
		if l >= 10 {
			return nil, "", bad(labelsPath, "label %d of example %d outside [0, 10)", l, i)
		}
	}
	return &Set{
		Name: "fashion-mnist/" + prefix, H: images.Dims[1], W: images.Dims[2], C: 1, Classes: 10,
		Pixels: images.Data, Labels: labels.Data,
	}, imagesPath, nil
}

// readIDXIn reads base.gz or, if that does not exist, base from dir, and
// returns the path it read. A file that is missing is a missingError (for
// base.gz), one that is unreadable as IDX a MalformedError.
func readIDXIn(dir, base string) (*idx, string, error) {
	gz := filepath.Join(dir, base+".gz")
	path := gz
	f, err := os.Open(gz)
	if errors.Is(err, fs.ErrNotExist) {
		plain := filepath.Join(dir, base)
		// Only when the plain file is missing too is the data set missing
		// (reported under the .gz name, the Debian package's).
		if pf, perr := os.Open(plain); !errors.Is(perr, fs.ErrNotExist) {
			f, err, path = pf, perr, plain
		}
	}
	if err != nil {
		return nil, "", missing(path, FashionMNISTHint, err)
	}
	defer f.Close()
	idx, err := readIDX(f)
	if err != nil {
		return nil, "", &MalformedError{Path: path, Err: err, Hint: fashionMalformedHint}
	}
	return idx, path, nil
}
