package frs

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// faceAttackData returns the paper's face-attack data directory:
// $TESBO_FACE_ATTACK_DATA. That data lives outside the repository (it is
// optional reference data, not part of a clone), so the test skips without
// it, even under CI.
func faceAttackData(t *testing.T) string {
	dir := os.Getenv("TESBO_FACE_ATTACK_DATA")
	if _, err := os.Stat(filepath.Join(dir, "fr_gallery41_encodings.npy")); err != nil {
		t.Skipf("optional reference data (the paper's dlib gallery and attacker photo, kept outside the repository) not found; "+
			"set TESBO_FACE_ATTACK_DATA to its directory to run this check: %v", err)
	}
	return dir
}

// TestDlibGalleryCompatibility checks that face-api descriptors live in the
// same space as the paper's gallery, 41 encodings computed with dlib's
// face_recognition: the attacker's face-api descriptor lies at the distances
// of "a different person" from the gallery (not the ~1+ of an unrelated
// embedding), and shuffling its coordinates (which keeps its norm and value
// distribution but breaks any dimension-wise correspondence) moves it far
// away. It logs the figures.
func TestDlibGalleryCompatibility(t *testing.T) {
	dir := faceAttackData(t)
	p := realPool(t)
	g, err := LoadGallery(context.Background(), nil, filepath.Join(dir, "fr_gallery41_encodings.npy"), GalleryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	img, err := DecodeImageFile(filepath.Join(dir, "test_image_sanjay_4.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	faces, err := p.Analyze(context.Background(), img, AnalyzeOptions{})
	if err != nil || len(faces) == 0 {
		t.Fatalf("attacker photo: %d faces, %v", len(faces), err)
	}
	a := faces[0].Descriptor
	dists := func(d []float64) []float64 {
		out := make([]float64, len(g.Entries))
		for i, e := range g.Entries {
			out[i] = Distance(d, e.Descriptor)
		}
		sort.Float64s(out)
		return out
	}
	ad := dists(a)
	var within []float64
	for i := range g.Entries {
		for j := i + 1; j < len(g.Entries); j++ {
			within = append(within, Distance(g.Entries[i].Descriptor, g.Entries[j].Descriptor))
		}
	}
	sort.Float64s(within)
	rng := rand.New(rand.NewPCG(1, 2))
	var shuffled []float64
	for k := 0; k < 200; k++ {
		s := append([]float64(nil), a...)
		rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		shuffled = append(shuffled, dists(s)[0])
	}
	sort.Float64s(shuffled)
	norm := func(d []float64) float64 { return Distance(d, make([]float64, len(d))) }
	var gnorm float64
	for _, e := range g.Entries {
		gnorm += norm(e.Descriptor) / float64(len(g.Entries))
	}
	t.Logf("attacker (face-api) to dlib gallery: nearest %.3f, next %.3f, %.3f, median %.3f", ad[0], ad[1], ad[2], quantile(ad, 0.5))
	t.Logf("dlib gallery pairwise: min %.3f median %.3f max %.3f", within[0], quantile(within, 0.5), within[len(within)-1])
	t.Logf("norms: attacker %.3f, gallery mean %.3f; coordinate-shuffled attacker: nearest %.3f (min over 200 shuffles %.3f)",
		norm(a), gnorm, quantile(shuffled, 0.5), shuffled[0])
	if med, wmed := quantile(ad, 0.5), quantile(within, 0.5); math.Abs(med-wmed) > 0.15 {
		t.Errorf("attacker's median distance to the gallery %.3f is not on the gallery's own scale %.3f", med, wmed)
	}
	if shuffled[0] < ad[0]+0.2 {
		t.Errorf("shuffled coordinates come as close (%.3f) as the real descriptor (%.3f): no dimension-wise correspondence", shuffled[0], ad[0])
	}
}
