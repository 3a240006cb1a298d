package dataset

import (
	"fmt"
	"os"
	"path/filepath"
)

// CIFAR-10 binary format: records of 1 label byte followed by 3072 pixel
// bytes, the red, green and blue 32×32 planes in row-major order.
const (
	cifarSide   = 32
	cifarPlane  = cifarSide * cifarSide
	cifarRecord = 1 + 3*cifarPlane
)

// CIFAR10Hint says how to get CIFAR-10.
const CIFAR10Hint = "download the CIFAR-10 binary version (cifar-10-binary.tar.gz) from " +
	"https://www.cs.toronto.edu/~kriz/cifar.html, unpack it and pass the cifar-10-batches-bin " +
	"directory (holding data_batch_1.bin … data_batch_5.bin and test_batch.bin) as data_dir"

// CIFAR10 reads the training set (data_batch_1.bin … data_batch_5.bin,
// 50,000 images) and the test set (test_batch.bin, 10,000) from dir:
// 32×32×3 images, 10 classes.
func CIFAR10(dir string) (train, test *Set, err error) {
	train = &Set{Name: "cifar10/train", H: cifarSide, W: cifarSide, C: 3, Classes: 10}
	for i := 1; i <= 5; i++ {
		b, err := readCIFAR10File(filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i)))
		if err != nil {
			return nil, nil, err
		}
		train.Pixels = append(train.Pixels, b.Pixels...)
		train.Labels = append(train.Labels, b.Labels...)
	}
	if test, err = readCIFAR10File(filepath.Join(dir, "test_batch.bin")); err != nil {
		return nil, nil, err
	}
	test.Name = "cifar10/test"
	return train, test, nil
}

// readCIFAR10File reads one CIFAR-10 binary batch file and converts the
// planes to height × width × channel order.
func readCIFAR10File(path string) (*Set, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, missing(path, CIFAR10Hint, err)
	}
	if len(raw) == 0 || len(raw)%cifarRecord != 0 {
		return nil, &MalformedError{Path: path, Hint: CIFAR10Hint, Err: fmt.Errorf(
			"%d bytes is not a whole number of %d-byte CIFAR-10 records (truncated or not a CIFAR-10 binary batch)",
			len(raw), cifarRecord)}
	}
	n := len(raw) / cifarRecord
	s := &Set{
		Name: filepath.Base(path), H: cifarSide, W: cifarSide, C: 3, Classes: 10,
		Pixels: make([]byte, n*3*cifarPlane), Labels: make([]byte, n),
	}
	for i := range n {
		rec := raw[i*cifarRecord : (i+1)*cifarRecord]
		if rec[0] >= 10 {
			return nil, &MalformedError{Path: path, Hint: CIFAR10Hint, Err: fmt.Errorf(
				"record %d has label %d outside [0, 10) (not a CIFAR-10 binary batch?)", i, rec[0])}
		}
		s.Labels[i] = rec[0]
		img := s.Pixels[i*3*cifarPlane : (i+1)*3*cifarPlane]
		for c := range 3 {
			plane := rec[1+c*cifarPlane : 1+(c+1)*cifarPlane]
			for p, v := range plane {
				img[p*3+c] = v
			}
		}
	}
	return s, nil
}
