package frs

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func TestNPYRoundTrip(t *testing.T) {
	rows := [][]float64{make([]float64, DescriptorLen), make([]float64, DescriptorLen), make([]float64, DescriptorLen)}
	for i := range rows {
		for j := range rows[i] {
			rows[i][j] = math.Sin(float64(i*DescriptorLen+j)) / 7
		}
	}
	path := filepath.Join(t.TempDir(), "g.npy")
	if err := WriteNPY(path, rows); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(path)
	if (10+int(binary.LittleEndian.Uint16(raw[8:])))%64 != 0 {
		t.Error("header not padded to 64 bytes as NumPy writes it")
	}
	g, err := LoadGallery(context.Background(), nil, path, GalleryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Entries) != 3 || g.Entries[2].Name != "row 2" {
		t.Fatalf("entries %d", len(g.Entries))
	}
	for i := range rows {
		for j := range rows[i] {
			if g.Entries[i].Descriptor[j] != rows[i][j] {
				t.Fatalf("row %d col %d: %v, want %v", i, j, g.Entries[i].Descriptor[j], rows[i][j])
			}
		}
	}
	if i, d := g.Nearest(rows[1]); i != 1 || d != 0 {
		t.Errorf("Nearest(row 1) = %d, %v", i, d)
	}
}

// npyBytes builds an .npy file by hand: float32, Fortran order, big-endian
// variants that WriteNPY never produces.
func npyBytes(descr string, fortran bool, n, d int, vals []float64) []byte {
	fo := "False"
	if fortran {
		fo = "True"
	}
	hdr := "{'descr': '" + descr + "', 'fortran_order': " + fo + ", 'shape': (" + itoa(n) + ", " + itoa(d) + "), }\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	b.WriteString(hdr)
	var order binary.ByteOrder = binary.LittleEndian
	if descr[0] == '>' {
		order = binary.BigEndian
	}
	for _, v := range vals {
		if strings.HasSuffix(descr, "f4") {
			binary.Write(&b, order, float32(v))
		} else {
			binary.Write(&b, order, v)
		}
	}
	return b.Bytes()
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestReadNPYVariants(t *testing.T) {
	// 2×3 matrix [[1 2 3] [4 5 6]].
	c := []float64{1, 2, 3, 4, 5, 6}
	f := []float64{1, 4, 2, 5, 3, 6}
	for _, tc := range []struct {
		name    string
		descr   string
		fortran bool
		vals    []float64
	}{{"f8 C", "<f8", false, c}, {"f4 C", "<f4", false, c}, {"f8 Fortran", "<f8", true, f}, {"f8 big-endian", ">f8", false, c}} {
		rows, err := readNPY(bytes.NewReader(npyBytes(tc.descr, tc.fortran, 2, 3, tc.vals)))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(rows) != 2 || rows[0][2] != 3 || rows[1][0] != 4 {
			t.Errorf("%s: %v", tc.name, rows)
		}
	}
	for _, bad := range [][]byte{[]byte("not numpy at all"), npyBytes("<i8", false, 2, 3, c), npyBytes("<f8", false, 2, 3, c[:4])} {
		if _, err := readNPY(bytes.NewReader(bad)); err == nil {
			t.Errorf("accepted %q…", bad[:min(len(bad), 40)])
		}
	}
}

func TestDescriptorFileErrors(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short.npy")
	WriteNPY(short, [][]float64{{1, 2, 3}})
	js := filepath.Join(dir, "g.json")
	os.WriteFile(js, []byte(`[{"name":"alice","descriptor":[1,2]}]`), 0o644)
	txt := filepath.Join(dir, "g.txt")
	os.WriteFile(txt, []byte("x"), 0o644)
	for _, p := range []string{short, js, txt, filepath.Join(dir, "missing.npy")} {
		if _, err := LoadGallery(context.Background(), nil, p, GalleryOptions{}); err == nil {
			t.Errorf("%s accepted", filepath.Base(p))
		}
	}
	good := make([]string, DescriptorLen)
	for i := range good {
		good[i] = "0.5"
	}
	os.WriteFile(js, []byte(`[{"name":"alice","descriptor":[`+strings.Join(good, ",")+`]}]`), 0o644)
	g, err := LoadGallery(context.Background(), nil, js, GalleryOptions{})
	if err != nil || g.Entries[0].Name != "alice" {
		t.Fatalf("json gallery: %v %v", g, err)
	}
	os.WriteFile(js, []byte(`[[`+strings.Join(good, ",")+`]]`), 0o644)
	if g, err := LoadGallery(context.Background(), nil, js, GalleryOptions{}); err != nil || g.Entries[0].Name != "row 0" {
		t.Fatalf("json list-of-lists gallery: %v %v", g, err)
	}
}

// countingFRS is a fake FRS finding one face per photo, or two in photos
// whose top-left pixel is red.
type countingFRS struct{ analyzes atomic.Int64 }

func (c *countingFRS) Analyze(_ context.Context, img image.Image, _ AnalyzeOptions) ([]Face, error) {
	c.analyzes.Add(1)
	r, g, b, _ := img.At(img.Bounds().Min.X, img.Bounds().Min.Y).RGBA()
	d := make([]float64, DescriptorLen)
	d[0], d[1], d[2] = float64(r>>8)/255, float64(g>>8)/255, float64(b>>8)/255
	face := Face{Box: Box{X: 1, Y: 2, W: 3, H: 4}, Score: 0.9, Landmarks: make([]Point, NumLandmarks), Descriptor: d}
	if r>>8 == 255 && g == 0 {
		d2 := append([]float64(nil), d...)
		d2[3] = 1
		return []Face{face, {Box: face.Box, Score: 0.8, Landmarks: make([]Point, NumLandmarks), Descriptor: d2}}, nil
	}
	return []Face{face}, nil
}
func (c *countingFRS) Describe(context.Context, image.Image, []Point) ([]float64, error) {
	return nil, nil
}
func (c *countingFRS) Close() error { return nil }

func writePNG(t *testing.T, path string, c color.RGBA) {
	img := uniform(8, 8, c)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

func TestPhotoGalleryAndCache(t *testing.T) {
	dir := t.TempDir()
	writePNG(t, filepath.Join(dir, "alice.png"), color.RGBA{10, 20, 30, 255})
	writePNG(t, filepath.Join(dir, "group.png"), color.RGBA{255, 0, 0, 255})
	writePNG(t, filepath.Join(dir, "attacker.png"), color.RGBA{0, 0, 255, 255})
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a photo"), 0o644)
	cache := filepath.Join(t.TempDir(), "cache")
	f := &countingFRS{}
	o := GalleryOptions{CacheDir: cache, CacheTag: "fake", Exclude: []string{filepath.Join(dir, "attacker.png")}, Parallel: 2}
	g, err := LoadGallery(context.Background(), f, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range g.Entries {
		names = append(names, e.Name)
	}
	if strings.Join(names, ",") != "alice,group#0,group#1" || g.Entries[0].Source != filepath.Join(dir, "alice.png") {
		t.Fatalf("entries %v", names)
	}
	if n := f.analyzes.Load(); n != 2 {
		t.Errorf("%d analyses, want 2 (attacker excluded)", n)
	}
	// Second load: all from the cache.
	g2, err := LoadGallery(context.Background(), f, dir, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.analyzes.Load(); n != 2 || len(g2.Entries) != 3 || g2.Entries[2].Descriptor[3] != 1 {
		t.Errorf("after a cached load: %d analyses, %d entries", n, len(g2.Entries))
	}
	// A changed photo or another FRS tag misses the cache.
	writePNG(t, filepath.Join(dir, "alice.png"), color.RGBA{11, 20, 30, 255})
	if _, err := LoadGallery(context.Background(), f, dir, o); err != nil || f.analyzes.Load() != 3 {
		t.Errorf("changed photo: %d analyses, want 3 (%v)", f.analyzes.Load(), err)
	}
	o.CacheTag = "other"
	if _, err := LoadGallery(context.Background(), f, dir, o); err != nil || f.analyzes.Load() != 5 {
		t.Errorf("other FRS: %d analyses, want 5 (%v)", f.analyzes.Load(), err)
	}
	// A pattern narrows the photos.
	o.Pattern = "al*.png"
	if g, err := LoadGallery(context.Background(), f, dir, o); err != nil || len(g.Entries) != 1 || g.Entries[0].Name != "alice" {
		t.Errorf("pattern al*.png: %v, %v", g, err)
	}
	o.Pattern = ""
	// A directory without photos is an error that says so.
	if _, err := LoadGallery(context.Background(), f, t.TempDir(), o); err == nil || !strings.Contains(err.Error(), "no faces") {
		t.Errorf("empty dir: %v", err)
	}
}
