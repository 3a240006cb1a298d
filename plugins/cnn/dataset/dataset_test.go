package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tesbo/tesbo/internal/testenv"
)

// idxBytes encodes an unsigned-byte IDX file.
func idxBytes(dims []int, data []byte) []byte {
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0x08, byte(len(dims))})
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, uint32(d))
	}
	b.Write(data)
	return b.Bytes()
}

func gzipBytes(t *testing.T, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadIDX(t *testing.T) {
	data := []byte{1, 2, 3, 4, 5, 6}
	good := idxBytes([]int{2, 3}, data)
	for _, tc := range []struct {
		name    string
		file    []byte
		wantErr string // empty: must succeed
	}{
		{"plain", good, ""},
		{"gzip", gzipBytes(t, good), ""},
		{"wrong magic", append([]byte{0x12, 0x34}, good[2:]...), "wrong magic"},
		{"wrong type", append([]byte{0, 0, 0x0d}, good[3:]...), "not supported"},
		{"zero dimensions", []byte{0, 0, 8, 0}, "dimensions"},
		{"truncated header", good[:6], "unexpected EOF"},
		{"truncated body", good[:len(good)-2], "got 4 of 6 bytes"},
		{"truncated gzip", gzipBytes(t, good)[:20], "unexpected EOF"},
		{"trailing bytes", append(append([]byte(nil), good...), 9), "trailing"},
		{"empty file", nil, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx, err := readIDX(bytes.NewReader(tc.file))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ReadIDX: %v", err)
				}
				if fmt.Sprint(idx.Dims) != "[2 3]" || !bytes.Equal(idx.Data, data) {
					t.Fatalf("got dims %v data %v, want [2 3] %v", idx.Dims, idx.Data, data)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ReadIDX error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// writeFashion writes a tiny Fashion-MNIST-shaped directory: n train and
// n test images of h×w, pixel value = example index, label = index mod 10.
func writeFashion(t *testing.T, dir string, n, h, w int, gz bool) {
	t.Helper()
	for _, prefix := range []string{"train", "t10k"} {
		pix := make([]byte, n*h*w)
		lab := make([]byte, n)
		for i := range n {
			lab[i] = byte(i % 10)
			for p := range h * w {
				pix[i*h*w+p] = byte(i)
			}
		}
		files := map[string][]byte{
			prefix + "-images-idx3-ubyte": idxBytes([]int{n, h, w}, pix),
			prefix + "-labels-idx1-ubyte": idxBytes([]int{n}, lab),
		}
		for name, raw := range files {
			if gz {
				writeFile(t, filepath.Join(dir, name+".gz"), gzipBytes(t, raw))
			} else {
				writeFile(t, filepath.Join(dir, name), raw)
			}
		}
	}
}

func TestFashionMNISTGenerated(t *testing.T) {
	for _, gz := range []bool{true, false} {
		dir := t.TempDir()
		writeFashion(t, dir, 12, 4, 3, gz)
		train, test, err := FashionMNIST(dir)
		if err != nil {
			t.Fatalf("gz=%v: %v", gz, err)
		}
		for _, s := range []*Set{train, test} {
			if s.size() != 12 || s.H != 4 || s.W != 3 || s.C != 1 || s.Classes != 10 {
				t.Fatalf("gz=%v: set %s has %d examples of %d×%d×%d, %d classes", gz, s.Name, s.size(), s.H, s.W, s.C, s.Classes)
			}
			if s.Labels[11] != 1 || s.Pixels[11*12+5] != 11 {
				t.Fatalf("gz=%v: example 11 has label %d and pixel %d, want 1 and 11", gz, s.Labels[11], s.Pixels[11*12+5])
			}
		}
		mean, std := train.ChannelStats()
		// Pixel value i for example i, 12 pixels each: mean of i/255 over 0..11.
		if math.Abs(mean[0]-5.5/255) > 1e-12 || math.Abs(std[0]-math.Sqrt(143.0/12)/255) > 1e-12 {
			t.Fatalf("ChannelStats = %v, %v; want %v, %v", mean, std, 5.5/255, math.Sqrt(143.0/12)/255)
		}
		z := train.Standardized(mean, std)
		if want := float32((3.0/255 - mean[0]) / std[0]); z[3*12] != want {
			t.Fatalf("Standardized value %v, want %v", z[3*12], want)
		}
		head := train.Head(5)
		x, y := head.scaledPixels(), head.IntLabels()
		if len(x) != 5*12 || len(y) != 5 || x[4*12] != 4.0/255 || y[3] != 3 {
			t.Fatalf("Head(5): %d values, %d labels, x[48] = %v, y[3] = %d", len(x), len(y), x[48], y[3])
		}
	}
}

func TestFashionMNISTErrors(t *testing.T) {
	t.Run("missing directory", func(t *testing.T) {
		_, _, err := FashionMNIST(filepath.Join(t.TempDir(), "nope"))
		var me *missingError
		if !errors.As(err, &me) || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("error %v is not a MissingError", err)
		}
		for _, want := range []string{"train-images-idx3-ubyte.gz", "apt-get install dataset-fashion-mnist"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not mention %q", err, want)
			}
		}
	})
	// Every malformed file is a *MalformedError naming the file read (the
	// .gz or the plain one) and carrying the install hint.
	for _, tc := range []struct {
		name    string
		gz      bool
		corrupt func(t *testing.T, dir string) // overwrites one generated file
		file    string                         // the file the error must name
		wantErr string
	}{
		{"label count mismatch", false, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "train-labels-idx1-ubyte"), idxBytes([]int{9}, make([]byte, 9)))
		}, "train-labels-idx1-ubyte", "do not match the 10 images"},
		{"label out of range", false, func(t *testing.T, dir string) {
			lab := make([]byte, 10)
			lab[7] = 10
			writeFile(t, filepath.Join(dir, "t10k-labels-idx1-ubyte"), idxBytes([]int{10}, lab))
		}, "t10k-labels-idx1-ubyte", "label 10 of example 7"},
		{"wrong magic", true, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "train-images-idx3-ubyte.gz"), gzipBytes(t, []byte{0x13, 0x37, 8, 3, 0, 0}))
		}, "train-images-idx3-ubyte.gz", "wrong magic"},
		{"truncated body", true, func(t *testing.T, dir string) {
			raw := idxBytes([]int{10, 2, 2}, make([]byte, 40))
			writeFile(t, filepath.Join(dir, "t10k-images-idx3-ubyte.gz"), gzipBytes(t, raw[:len(raw)-5]))
		}, "t10k-images-idx3-ubyte.gz", "got 35 of 40 bytes"},
		{"images not N×H×W", false, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "train-images-idx3-ubyte"), idxBytes([]int{10, 4}, make([]byte, 40)))
		}, "train-images-idx3-ubyte", "want [N H W]"},
		{"test images of another size", false, func(t *testing.T, dir string) {
			writeFile(t, filepath.Join(dir, "t10k-images-idx3-ubyte"), idxBytes([]int{10, 3, 2}, make([]byte, 60)))
		}, "t10k-images-idx3-ubyte", "are 3×2×1 but training images"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFashion(t, dir, 10, 2, 2, tc.gz)
			tc.corrupt(t, dir)
			train, test, err := FashionMNIST(dir)
			var me *MalformedError
			if !errors.As(err, &me) || train != nil || test != nil {
				t.Fatalf("FashionMNIST = %v, %v, %v; want nil sets and a *MalformedError", train, test, err)
			}
			path := filepath.Join(dir, tc.file)
			if me.Path != path {
				t.Errorf("error names %s, want %s", me.Path, path)
			}
			for _, want := range []string{path, tc.wantErr, FashionMNISTHint, "apt-get install --reinstall dataset-fashion-mnist"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
	t.Run("truncated file unwraps to ErrUnexpectedEOF", func(t *testing.T) {
		dir := t.TempDir()
		writeFashion(t, dir, 10, 2, 2, false)
		writeFile(t, filepath.Join(dir, "train-labels-idx1-ubyte"), []byte{0, 0, 8})
		if _, _, err := FashionMNIST(dir); !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error %v, want one wrapping io.ErrUnexpectedEOF", err)
		}
	})
}

func TestCheckPair(t *testing.T) {
	good := func() *Set {
		return &Set{Name: "s", H: 2, W: 3, C: 1, Classes: 10, Pixels: make([]byte, 2*6), Labels: []byte{0, 9}}
	}
	if err := checkPair(good(), good()); err != nil {
		t.Fatalf("CheckPair of two good sets: %v", err)
	}
	for _, tc := range []struct {
		name    string
		change  func(train, test *Set)
		wantErr string
	}{
		{"test height", func(_, te *Set) { te.H, te.W = 3, 2 }, "are 3×2×1 but training images"},
		{"test channels", func(_, te *Set) { te.C, te.Pixels = 3, make([]byte, 2*18) }, "are 2×3×3"},
		{"classes", func(tr, _ *Set) { tr.Classes = 12 }, "has 10 classes but training set"},
		{"label range", func(_, te *Set) { te.Classes = 5 }, "label 9 of example 1 outside [0, 5)"},
		{"pixel count", func(tr, _ *Set) { tr.Pixels = tr.Pixels[:11] }, "11 pixel values"},
		{"empty", func(_, te *Set) { te.Pixels, te.Labels = nil, nil }, "no examples"},
		{"zero shape", func(tr, _ *Set) { tr.W = 0 }, "must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			train, test := good(), good()
			tc.change(train, test)
			if err := checkPair(train, test); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("CheckPair error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// cifarRecordBytes builds one CIFAR-10 record whose channel c at pixel p
// holds (p + 7c) mod 256.
func cifarRecordBytes(label byte) []byte {
	rec := make([]byte, cifarRecord)
	rec[0] = label
	for c := range 3 {
		for p := range cifarPlane {
			rec[1+c*cifarPlane+p] = byte(p + 7*c)
		}
	}
	return rec
}

func TestCIFAR10Generated(t *testing.T) {
	dir := t.TempDir()
	for i := 1; i <= 5; i++ {
		writeFile(t, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i)),
			append(cifarRecordBytes(byte(i)), cifarRecordBytes(byte(i+4))...))
	}
	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarRecordBytes(9))
	train, test, err := CIFAR10(dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.size() != 10 || test.size() != 1 || train.H != 32 || train.C != 3 {
		t.Fatalf("train %d, test %d examples, shape %d×%d×%d", train.size(), test.size(), train.H, train.W, train.C)
	}
	if fmt.Sprint(train.IntLabels()) != "[1 5 2 6 3 7 4 8 5 9]" || test.Labels[0] != 9 {
		t.Fatalf("labels %v / %v", train.Labels, test.Labels)
	}
	// HWC: pixel p = 33 (row 1, column 1), channel 2 → (33 + 14) mod 256.
	img := train.Pixels[3*cifarPlane*3:] // the fourth image
	if img[33*3+2] != 47 || img[33*3+0] != 33 {
		t.Fatalf("pixel (1,1) = %v, want [33 40 47]", img[33*3:33*3+3])
	}
}

func TestCIFAR10Errors(t *testing.T) {
	t.Run("missing", func(t *testing.T) {
		dir := t.TempDir()
		_, _, err := CIFAR10(dir)
		var me *missingError
		if !errors.As(err, &me) || me.Path != filepath.Join(dir, "data_batch_1.bin") ||
			!strings.Contains(err.Error(), "cifar-10-binary.tar.gz") {
			t.Fatalf("error %v, want a MissingError for data_batch_1.bin with the download hint", err)
		}
	})
	// Malformed files: a *MalformedError naming the file, with the download
	// hint, through readCIFAR10File and through CIFAR10.
	for _, tc := range []struct {
		name, file, wantErr string
		content             []byte
	}{
		{"truncated", "data_batch_3.bin", "truncated", cifarRecordBytes(1)[:3000]},
		{"empty", "test_batch.bin", "0 bytes", nil},
		{"not CIFAR (bad label byte)", "test_batch.bin", "label 200", cifarRecordBytes(200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for i := 1; i <= 5; i++ {
				writeFile(t, filepath.Join(dir, fmt.Sprintf("data_batch_%d.bin", i)), cifarRecordBytes(3))
			}
			writeFile(t, filepath.Join(dir, "test_batch.bin"), cifarRecordBytes(4))
			path := filepath.Join(dir, tc.file)
			writeFile(t, path, tc.content)
			_, err1 := readCIFAR10File(path)
			_, _, err2 := CIFAR10(dir)
			for _, err := range []error{err1, err2} {
				var me *MalformedError
				if !errors.As(err, &me) || me.Path != path {
					t.Fatalf("error %v, want a *MalformedError for %s", err, path)
				}
				for _, want := range []string{path, tc.wantErr, CIFAR10Hint} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
			}
		})
	}
}

// RequireFashionMNIST returns the directory of the real data set or stops
// the test: with CI set a missing data set is a failure carrying the install
// command, otherwise a skip.
func requireFashionMNIST(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(FashionMNISTDir, "train-images-idx3-ubyte.gz")); err != nil {
		testenv.Need(t, "real Fashion-MNIST not found: "+FashionMNISTHint)
	}
	return FashionMNISTDir
}

func TestFashionMNISTReal(t *testing.T) {
	train, test, err := FashionMNIST(requireFashionMNIST(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		s    *Set
		n    int
		each int
	}{{train, 60000, 6000}, {test, 10000, 1000}} {
		if c.s.size() != c.n || c.s.H != 28 || c.s.W != 28 || len(c.s.Pixels) != c.n*784 {
			t.Fatalf("%s: %d examples of %d×%d, want %d of 28×28", c.s.Name, c.s.size(), c.s.H, c.s.W, c.n)
		}
		// Fashion-MNIST is balanced: every class has exactly n/10 examples.
		var count [10]int
		for _, l := range c.s.Labels {
			count[l]++
		}
		for k, got := range count {
			if got != c.each {
				t.Fatalf("%s: class %d has %d examples, want %d", c.s.Name, k, got, c.each)
			}
		}
	}
}
